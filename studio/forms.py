"""Forms of the organisation pages. They validate input shapes; the services validate the rules."""

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import password_validators_help_text_html

from studio.clusters import access as cluster_access
from studio.clusters.models import Cluster, default_gpu_scheduler
from studio.iam.models import Role
from studio.org.models import Department, Project


class ClusterForm(forms.ModelForm):
    # Credentials are write-only: an edit form shows them empty, and empty keeps the stored value.
    token = forms.CharField(required=False, widget=forms.PasswordInput(attrs={"autocomplete": "off"}),
                            help_text="Service-account bearer token. Stored encrypted; leave empty to keep the "
                                      "current one.")
    kubeconfig = forms.CharField(required=False, widget=forms.Textarea,
                                 help_text="Or a whole kubeconfig (YAML), instead of URL and token. Stored encrypted; "
                                           "leave empty to keep the current one.")

    class Meta:
        model = Cluster
        fields = ["name", "api_server_url", "token", "kubeconfig", "verify_tls", "prometheus_url", "gpu_scheduler"]
        labels = {"api_server_url": "API server URL", "verify_tls": "Verify TLS", "prometheus_url": "Prometheus URL",
                  "gpu_scheduler": "GPU scheduler"}
        help_texts = {"api_server_url": "e.g. https://10.0.0.1:6443", "name": "Lowercase letters, digits and dashes.",
                      "prometheus_url": "Optional: where GPU metrics (DCGM) are read from.",
                      "gpu_scheduler": "auto: KAI Scheduler where the cluster serves its Queue API (projects become "
                                       "queues, work over quota waits in them); kai: always; none: Kubernetes' own "
                                       "scheduling and the project quotas checked at submission."}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["token"].initial = self.fields["kubeconfig"].initial = ""
        if self.instance.pk:
            self.initial["token"] = self.initial["kubeconfig"] = ""
        self.fields["gpu_scheduler"].required = False  # left out: unchanged (a new cluster: GPU_SCHEDULER)

    def clean_gpu_scheduler(self):
        return self.cleaned_data.get("gpu_scheduler") or self.instance.gpu_scheduler or default_gpu_scheduler()

    # The API's own checks (studio.serializers.ClusterSerializer): a metadata, link-local or unlisted private
    # address, or a kubeconfig with anything but inline credentials (or keys that are not text), is refused here
    # as it is there.
    FIELDS = {"apiServerUrl": "api_server_url", "prometheusUrl": "prometheus_url"}

    def clean(self):
        data = super().clean()
        try:
            if data.get("kubeconfig"):
                cluster_access.parse_kubeconfig(data["kubeconfig"])
            for field, source in self.FIELDS.items():
                if data.get(source):
                    cluster_access.check_url(field, data[source])
        except cluster_access.AccessRefused as exc:
            name = self.FIELDS.get(exc.field, "kubeconfig" if exc.field.startswith("kubeconfig") else None)
            self.add_error(name, exc.message if name != "kubeconfig" else f"{exc.field}: {exc.message}")
        return data


class DepartmentForm(forms.ModelForm):
    class Meta:
        model = Department
        fields = ["name", "description", "cluster"]
        help_texts = {"cluster": "Run:ai's department is on one cluster: its projects are there, and its quotas are "
                                 "per node pool of that cluster. Empty: the cluster of its first project."}


class ProjectForm(forms.ModelForm):
    """A new project; its per-node-pool quotas are set on its page next (they name its cluster's pools)."""

    class Meta:
        model = Project
        fields = ["name", "department", "cluster"]
        help_texts = {"name": "Lowercase letters, digits and dashes; its namespace is studio-<name>.",
                      "cluster": "Its quotas per node pool of this cluster are set on the project's page next."}

    def __init__(self, *args, departments=None, **kwargs):
        super().__init__(*args, **kwargs)
        if departments is not None:  # a department admin creates projects in their departments only
            self.fields["department"].queryset = departments


# The project's scheduling rules (Run:ai's names, in seconds; workloads/cluster/reclaim.py enforces them), edited in
# minutes: (form field, rule, label, help).
RULE_FIELDS = (
    ("idle_workspace_minutes", "interactiveJobMaxIdleDurationSeconds", "Suspend idle workspaces after (minutes)",
     "A running workspace whose GPUs stay under the idle threshold this long is suspended; empty: never."),
    ("idle_training_minutes", "trainingJobMaxIdleDurationSeconds", "Suspend idle trainings after (minutes)",
     "The same for trainings; empty: never."),
    ("workspace_limit_minutes", "interactiveJobTimeLimitSeconds", "Workspace time limit (minutes)",
     "A workspace that has run this long since it last started is suspended; empty: no limit."),
    ("training_limit_minutes", "trainingJobTimeLimitSeconds", "Training time limit (minutes)",
     "A training that has run this long is suspended; empty: no limit."),
)


class ProjectEditForm(forms.ModelForm):
    """A project's name and cluster are fixed (its namespace lives there); its department and scheduling rules
    (idle GPU reclaim, time limits) change here, its quotas in the per-node-pool form beside it."""

    class Meta:
        model = Project
        fields = ["department"]

    def __init__(self, *args, departments=None, disabled: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if departments is not None:
            self.fields["department"].queryset = departments
        rules = self.instance.scheduling_rules or {}
        for name, rule, label, help_text in RULE_FIELDS:
            self.fields[name] = forms.IntegerField(required=False, min_value=1, max_value=525_600, label=label,
                                                   help_text=help_text)
            if rules.get(rule):
                self.initial[name] = max(round(rules[rule] / 60), 1)
        for field in self.fields.values():
            field.disabled = field.disabled or disabled

    def scheduling_rules(self) -> dict:
        """The rules as the form sets them, over the stored ones the form does not show."""
        rules = dict(self.instance.scheduling_rules or {})
        for name, rule, _, _ in RULE_FIELDS:
            rules.pop(rule, None)
            if self.cleaned_data.get(name):
                rules[rule] = self.cleaned_data[name] * 60
        return rules


ROLE_HELP = ("Each of Run:ai's roles grants a level: viewer reads; member also submits and changes workloads; "
             "admin also manages members (and, held on a department, its projects).")


def role_label(role: Role) -> str:
    return f"{role.name} ({role.level})"


class MemberForm(forms.Form):
    """A user found by username or email (the page suggests matches as one types), and the Run:ai role to give
    them in a project or a department."""

    username = forms.CharField(label="User", max_length=254, help_text=(
        "Type part of a username or email and choose from the suggestions."),
        widget=forms.TextInput(attrs={"autocomplete": "off", "list": "member-suggestions"}))
    role = forms.ModelChoiceField(queryset=Role.objects.all(), label="Role", to_field_name="name",
                                  empty_label=None, initial="Viewer", help_text=ROLE_HELP)

    def __init__(self, *args, suggest_url: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["role"].label_from_instance = role_label
        if suggest_url:  # htmx fills the datalist with the users matching what is typed
            self.fields["username"].widget.attrs.update({
                "hx-get": suggest_url, "hx-trigger": "input changed delay:250ms", "hx-target": "#member-suggestions",
                "hx-swap": "innerHTML"})

    def clean_username(self):
        typed = self.cleaned_data["username"].strip()
        users = get_user_model().objects
        user = users.filter(username=typed).first()
        if user is not None:
            return user
        by_email = list(users.filter(email__iexact=typed, is_active=True)[:2])
        if len(by_email) > 1:
            raise forms.ValidationError("Several users have this email: choose one by username.")
        if not by_email:
            raise forms.ValidationError(f"No user with the username or email {typed!r}. Type part of it and "
                                        "choose from the suggestions.")
        return by_email[0]


class UserCreateForm(forms.Form):
    email = forms.EmailField(label="Email", help_text="The user logs in with it; a temporary password is shown once.")


class UserProjectRoleForm(forms.Form):
    project = forms.ModelChoiceField(queryset=Project.objects.none(), label="Project")
    role = forms.ModelChoiceField(queryset=Role.objects.all(), label="Role", to_field_name="name",
                                  empty_label=None, initial="Viewer", help_text=ROLE_HELP)

    def __init__(self, *args, projects=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["role"].label_from_instance = role_label
        self.fields["project"].queryset = projects if projects is not None else Project.objects.all()


class AccessKeyForm(forms.Form):
    name = forms.CharField(label="Name", max_length=100, help_text="What uses it, e.g. ci-pipeline or my laptop.")


class PasswordChangeForm(forms.Form):
    """One's own password: the current one, the new one twice (Django's password validators, in the service)."""

    current_password = forms.CharField(label="Current password", strip=False,
                                       widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}))
    new_password = forms.CharField(label="New password", strip=False, max_length=128,
                                   widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
                                   help_text=password_validators_help_text_html)
    new_password_again = forms.CharField(label="New password, again", strip=False,
                                         widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}))

    def clean(self):
        data = super().clean()
        if data.get("new_password") and data.get("new_password_again") not in (None, data["new_password"]):
            self.add_error("new_password_again", "The two new passwords differ.")
        return data
