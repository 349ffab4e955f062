"""Forms of the organisation pages. They validate input shapes; the services validate the rules."""

from django import forms
from django.contrib.auth import get_user_model

from studio.models import Cluster, Department, Membership, Project


class ClusterForm(forms.ModelForm):
    token = forms.CharField(required=False, widget=forms.PasswordInput, help_text="Service-account bearer token.")
    kubeconfig = forms.CharField(required=False, widget=forms.Textarea, help_text="Or a whole kubeconfig (YAML).")

    class Meta:
        model = Cluster
        fields = ["name", "api_server_url", "token", "kubeconfig", "verify_tls", "prometheus_url"]
        labels = {"api_server_url": "API server URL", "verify_tls": "Verify TLS", "prometheus_url": "Prometheus URL"}


class DepartmentForm(forms.ModelForm):
    class Meta:
        model = Department
        fields = ["name", "description"]


class ProjectForm(forms.ModelForm):
    class Meta:
        model = Project
        fields = ["name", "department", "cluster", "gpu_deserved", "gpu_limit"]
        labels = {"gpu_deserved": "GPUs deserved", "gpu_limit": "GPU limit"}


class MemberForm(forms.Form):
    username = forms.CharField()
    role = forms.ChoiceField(choices=Membership.Role.choices)

    def clean_username(self):
        user = get_user_model().objects.filter(username=self.cleaned_data["username"]).first()
        if user is None:
            raise forms.ValidationError("No such user.")
        return user
