"""Signals of the organisation's writes, for the apps to the right of studio (which studio never imports).

`deleting` is sent by `studio.services.model_delete` inside its transaction, before the row is deleted and before
Django collects what protects it: a receiver may remove what the row's deletion should take along (the workloads
app: a project's deleted workloads) or refuse the deletion by raising (a Conflict naming why).

`project_created` is sent by `studio.services.project_create` inside its transaction, once the row is written: an
app to the right reacts with work of its own (the policies app labels the new namespace for Pod Security)."""

from django.dispatch import Signal

deleting = Signal()  # sender: the model class; keyword: instance
project_created = Signal()  # sender: Project; keyword: instance
