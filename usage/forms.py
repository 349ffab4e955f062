"""The Reports page's request form: what a person fills in; the API's serializer (ReportRequestSerializer) then
checks it by the same rules as POST /api/v1/org-unit/reports."""

from django import forms

from usage.models import Report

GROUP_CHOICES = [("", "No grouping (one line per day and user)"), *Report.GroupBy.choices]


class ReportRequestForm(forms.Form):
    name = forms.CharField(max_length=255)
    description = forms.CharField(max_length=2000, required=False)
    start = forms.DateTimeField(label="From (UTC)", widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))
    end = forms.DateTimeField(label="Until (UTC)", widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))
    group_by = forms.ChoiceField(label="Group by", choices=GROUP_CHOICES, required=False)
    projects = forms.MultipleChoiceField(label="Only these projects", required=False,
                                         widget=forms.SelectMultiple(attrs={"size": 4}),
                                         help_text="None selected: every project.")
    departments = forms.MultipleChoiceField(label="Only these departments", required=False,
                                            widget=forms.SelectMultiple(attrs={"size": 4}),
                                            help_text="None selected: every department.")

    def __init__(self, *args, projects=(), departments=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["projects"].choices = [(n, n) for n in projects]
        self.fields["departments"].choices = [(n, n) for n in departments]

    def api_body(self) -> dict:
        """The API's request body made of the form's values."""
        data = self.cleaned_data
        return {"name": data["name"], "description": data["description"], "start": data["start"].isoformat(),
                "end": data["end"].isoformat(), "groupBy": data["group_by"] or None,
                "filterBy": [f"projectName=={n}" for n in data["projects"]]
                + [f"departmentName=={n}" for n in data["departments"]]}


API_FIELDS = {"name": "name", "description": "description", "start": "start", "end": "end", "groupBy": "group_by",
              "filterBy": "projects"}
