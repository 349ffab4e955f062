"""Forms of the organisation pages that edit what the API edits: per-node-pool quotas (Run:ai's `resources`),
node pools, and Run:ai's roles at project or department scope. They read input shapes; the services (the API's)
check the rules, and what they refuse is put back on the form's fields (`errors_onto`)."""

import re

from django import forms
from django.core.exceptions import ValidationError

from studio.clusters.models import NodePool
from studio.org.quotas import MEMORY_UNITS

KINDS = (("gpu", "GPUs"), ("cpu", "CPU (cores)"), ("memory", "Memory"))
PARTS = (("deserved", "Deserved"), ("limit", "Limit"), ("overQuotaWeight", "Over-quota weight"))
MILLICORES = 1000  # Run:ai's `cpu` quotas are millicores; the form shows cores


def _shown(value, kind: str):
    """A stored quota number as the form shows it (CPU millicores as cores); -1 (no limit) and unset as empty."""
    if value is None or value == -1:
        return None
    value = float(value) / (MILLICORES if kind == "cpu" else 1)
    return int(value) if value == int(value) else value


def _stored(value, kind: str):
    if value is None:
        return None
    value = float(value) * (MILLICORES if kind == "cpu" else 1)
    return int(value) if value == int(value) else value


class PoolQuotaForm(forms.Form):
    """For each node pool of the cluster, GPUs, CPU and memory: deserved, limit and over-quota weight (memory with
    its units). A pool left empty has no entry in `resources`; an empty limit is no limit."""

    def __init__(self, *args, pools: list[NodePool], resources: list[dict], disabled: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.pools = pools
        stored = {(r.get("nodePool") or {}).get("name"): r for r in resources or () if isinstance(r, dict)}
        for pool in pools:
            entry = stored.get(pool.name) or {}
            for kind, kind_label in KINDS:
                for part, part_label in PARTS:
                    name = self.field_name(pool, kind, part)
                    self.fields[name] = forms.DecimalField(
                        required=False, min_value=0, max_digits=14, decimal_places=3, disabled=disabled,
                        label=f"{kind_label} {part_label.lower()} in {pool.name}",
                        widget=forms.NumberInput(attrs={"step": "any", "inputmode": "decimal",
                                                        "data-pool": pool.name, "data-kind": kind,
                                                        "data-part": part}))
                    self.initial[name] = _shown((entry.get(kind) or {}).get(part), kind)
            units = self.field_name(pool, "memory", "units")
            self.fields[units] = forms.ChoiceField(choices=[(u, u) for u in MEMORY_UNITS], required=False,
                                                   disabled=disabled, label=f"Memory units in {pool.name}")
            self.initial[units] = (entry.get("memory") or {}).get("units") or "MB"

    @staticmethod
    def field_name(pool: NodePool, kind: str, part: str) -> str:
        return f"pool_{pool.pk}_{kind}_{part}"

    def rows(self):
        """(pool, [(kind label, [bound fields deserved, limit, weight], units field or None)]) for the template."""
        for pool in self.pools:
            yield pool, [(label, [self[self.field_name(pool, kind, part)] for part, _ in PARTS],
                          self[self.field_name(pool, "memory", "units")] if kind == "memory" else None)
                         for kind, label in KINDS]

    def resources(self) -> tuple[list[dict], list[NodePool]]:
        """The `resources` array the form says (for `studio.org.quotas.resources_from`), and the pool of each
        entry, in order (an error on `resources[i]` belongs to that pool's fields)."""
        items, order = [], []
        data = self.cleaned_data
        for pool in self.pools:
            values = {(kind, part): data.get(self.field_name(pool, kind, part)) for kind, _ in KINDS
                      for part, _ in PARTS}
            if all(v is None for v in values.values()):
                continue
            entry = {"nodePool": {"id": str(pool.pk), "name": pool.name}}
            for kind, _ in KINDS:
                quota = {part: _stored(values[(kind, part)], kind) for part, _ in PARTS
                         if values[(kind, part)] is not None}
                if kind == "gpu":
                    entry["gpu"] = {"deserved": quota.get("deserved", 0), **quota}
                elif quota:
                    if kind == "memory":
                        quota["units"] = data.get(self.field_name(pool, "memory", "units")) or "MB"
                    entry[kind] = quota
            items.append(entry)
            order.append(pool)
        return items, order

    PROBLEM = re.compile(r"^resources\[(\d+)\]\.(gpu|cpu|memory)\.(deserved|limit|overQuotaWeight|units)$")

    def errors_onto(self, exc: ValidationError, order: list[NodePool]) -> None:
        """A service's refusal (keys as the API names them: `resources[0].gpu.deserved`) onto the fields of that
        pool; anything else above the form. Every message is shown."""
        problems = exc.message_dict if hasattr(exc, "error_dict") else {None: exc.messages}
        for key, messages in problems.items():
            match = self.PROBLEM.match(key or "")
            field = None
            if match and int(match.group(1)) < len(order):
                field = self.field_name(order[int(match.group(1))], match.group(2), match.group(3))
            if field in self.fields:
                self.add_error(field, messages)
            else:
                self.add_error(None, [f"{key}: {m}" if key and key != "__all__" else m for m in messages])


class NodePoolForm(forms.ModelForm):
    """A node pool: the node label that selects its nodes, and Run:ai's settings the API stores. Its name is set
    once (quotas name it)."""

    gpu_network_acceleration_detection = forms.ChoiceField(
        choices=[(v, v) for v in ("Auto", "Use", "DontUse")], label="GPU network acceleration detection",
        help_text="Run:ai's setting (gpuNetworkAccelerationDetection), stored and answered by the API.")

    class Meta:
        model = NodePool
        fields = ["name", "label_key", "label_value", "gpu_network_acceleration_detection", "over_provisioning_ratio"]
        labels = {"label_key": "Node label key", "label_value": "Node label value",
                  "over_provisioning_ratio": "Over-provisioning ratio"}
        help_texts = {"name": "Lowercase letters, digits and dashes; quotas and workloads name the pool by it.",
                      "label_key": "Nodes with this label (key = value) are the pool's, e.g. run.ai/node-pool.",
                      "over_provisioning_ratio": "1 to 5 (Run:ai's overProvisioningRatio), stored and answered."}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["over_provisioning_ratio"].min_value = 1
        self.fields["over_provisioning_ratio"].max_value = 5
        self.fields["over_provisioning_ratio"].widget.attrs.update(min=1, max=5)
        if self.instance.pk:
            del self.fields["name"]
            if self.instance.is_default:
                del self.fields["label_key"], self.fields["label_value"]
        else:
            self.fields["label_key"].required = True
            self.fields["label_value"].required = True

    def clean_over_provisioning_ratio(self):
        value = self.cleaned_data["over_provisioning_ratio"]
        if not 1 <= value <= 5:
            raise ValidationError("From 1 to 5.")
        return value
