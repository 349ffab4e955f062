"""A template version's spec template as typed inputs, generated from the workload spec serializer of its kind
(the one the API validates the rendered spec with, registered by workloads): the spec's plain fields (image,
command, args, node pools…), its compute, security, pod affinity, readiness probe and (inference) serving port,
serving configuration and autoscaling fields, and its environment variables, ports, tolerations, labels,
annotations, exposed and related URLs, image pull secrets and each kind of storage (PVCs, git, NFS…) as rows, a
row's nested object (a PVC's claimInfo) as columns of its own, a list of strings (node pools, an exposed URL's
authorized users) as one comma-separated input, and the required node affinity's terms of match expressions as
one table of expressions numbered by term. A value may hold `{{ variable }}`: what does not read as the field's
type goes as typed, and the save's render-and-validate names any problem on its input. What no input shows is
kept as it was; the JSON view edits everything."""

from rest_framework import serializers

from profiles.validation import spec_serializer
from studio.typed_rows import (
    Fields,
    GroupedRows,
    Rows,
    columns_of,
    flat_columns,
    get_dotted,
    label_of,
    set_dotted,
    without,
)

MARK = "spec-typed"  # posted by the typed view: its inputs, not the JSON box, hold the spec
# (key, title) of the spec's objects shown as inputs (a list of objects inside one, such as compute's extended
# resources, as rows of its own), then (key, title, noun) of its lists shown as rows, a column per field of the
# list's items and of their nested objects (an environment variable's secret.name), a list of strings as one
# comma-separated input
OBJECTS = (("compute", "Compute"), ("security", "Security"), ("podAffinity", "Pod affinity"),
           ("servingPort", "Serving port"), ("servingConfiguration", "Serving configuration"),
           ("autoscaling", "Autoscaling"))
LISTS = (("environmentVariables", "Environment variables", "Environment variable"),
         ("ports", "Ports", "Port"),
         ("tolerations", "Tolerations", "Toleration"),
         ("labels", "Labels", "Label"),
         ("annotations", "Annotations", "Annotation"),
         ("exposedUrls", "Exposed URLs", "Exposed URL"),
         ("relatedUrls", "Related URLs", "Related URL"),
         ("imagePullSecrets", "Image pull secrets", "Image pull secret"))
ROW_BUTTON = {"environmentVariables", "ports", "tolerations", "labels", "annotations"}  # "Add a row to ports"
# storage.<kind>: (title, noun); a kind's columns are its serializer's fields and its nested objects' (one deep)
STORAGE = {"pvc": ("Storage · PVCs", "PVC"), "dataVolume": ("Storage · data volumes", "Data volume"),
           "git": ("Storage · Git repositories", "Git repository"), "nfs": ("Storage · NFS", "NFS volume"),
           "hostPath": ("Storage · host paths", "Host path"), "s3": ("Storage · S3 buckets", "S3 bucket"),
           "configMapVolume": ("Storage · ConfigMap volumes", "ConfigMap volume"),
           "secretVolume": ("Storage · Secret volumes", "Secret volume"),
           "emptyDirVolume": ("Storage · emptyDir volumes", "emptyDir volume")}
PROBE_LABELS = {"handler.httpGet.path": "HTTP GET path", "handler.httpGet.port": "HTTP GET port",
                "handler.httpGet.host": "HTTP GET host", "handler.httpGet.scheme": "HTTP GET scheme"}


class SpecEditor:
    def __init__(self, kind: str, *, data=None, spec=None):
        spec = spec if isinstance(spec, dict) else {}
        serializer_class = spec_serializer(kind)
        fields = serializer_class().fields if serializer_class else {}
        bound = data if data is not None and data.get(MARK) else None
        self.general = Fields("spec", columns_of(serializer_class) if serializer_class else (), data=bound,
                              value=spec)
        self.objects = [(title, Fields(key, columns_of(type(fields[key])), data=bound, value=spec.get(key)))
                        for key, title in OBJECTS if key in fields]
        probes = fields.get("probes")
        if isinstance(probes, serializers.Serializer) and "readiness" in probes.fields:
            self.objects.append(("Readiness probe", Fields(
                "probes.readiness", flat_columns(type(probes.fields["readiness"]), depth=2, labels=PROBE_LABELS),
                data=bound, value=get_dotted(spec, "probes.readiness"))))
        self.lists = []
        for key, title, noun in LISTS:
            if key in fields:
                rows = Rows(key, flat_columns(type(fields[key].child), depth=1), noun=noun, data=bound,
                            items=spec.get(key) or ())
                if key not in ROW_BUTTON:
                    rows.add = f"Add {'an' if noun[0] in 'AEIOU' else 'a'} {noun} row"
                self.lists.append((title, rows))
        for title, editor in self.objects:
            inner = fields.get(editor.key)
            for name, field in (inner.fields.items() if isinstance(inner, serializers.Serializer) else ()):
                if isinstance(field, serializers.ListSerializer):  # compute's extended resources
                    noun = label_of(name).removesuffix("s")
                    items = get_dotted(spec, f"{editor.key}.{name}")
                    rows = Rows(f"{editor.key}.{name}", flat_columns(type(field.child), depth=1), noun=noun,
                                data=bound, items=items if isinstance(items, list) else ())
                    rows.add = f"Add {'an' if noun[0] in 'AEIOU' else 'a'} {noun.lower()} row"
                    editor.rest = without(editor.rest, [name])
                    self.lists.append((f"{title} · {label_of(name).lower()}", rows))
        storage = fields.get("storage")
        for name, field in (storage.fields.items() if isinstance(storage, serializers.Serializer) else ()):
            if isinstance(field, serializers.ListSerializer) and name in STORAGE:
                title, noun = STORAGE[name]
                items = get_dotted(spec, f"storage.{name}")
                rows = Rows(f"storage.{name}", flat_columns(type(field.child), depth=1), noun=noun, data=bound,
                            items=items if isinstance(items, list) else ())
                rows.add = f"Add a {noun} row"
                self.lists.append((title, rows))
        affinity = fields.get("nodeAffinityRequired")
        if isinstance(affinity, serializers.Serializer):  # its terms (ORed), each a list of match expressions (ANDed)
            terms = affinity.fields["nodeSelectorTerms"]
            expressions = terms.child.fields["matchExpressions"]
            items = get_dotted(spec, "nodeAffinityRequired.nodeSelectorTerms")
            rows = GroupedRows("nodeAffinityRequired.nodeSelectorTerms", "matchExpressions",
                               flat_columns(type(expressions.child)), noun="Node affinity expression", group="Term",
                               data=bound, items=items if isinstance(items, list) else [])
            rows.add = "Add a node affinity expression"
            rows.help = ("A node must match every expression of one term (rows of the same term number); any term "
                         "will do. Values are separated by commas.")
            self.lists.append(("Node affinity (required)", rows))
        self.general.rest = without(self.general.rest, [editor.key for editor in self.editors()])

    def editors(self) -> list:
        return [editor for _, editor in (*self.objects, *self.lists)]

    @property
    def environment(self):
        return next(editor for editor in self.editors() if editor.key == "environmentVariables")

    @property
    def kept(self) -> list[str]:
        return sorted(self.general.rest)

    def value(self) -> dict:
        spec = self.general.value()
        for _, editor in self.objects:
            found = editor.value()
            if found:
                set_dotted(spec, editor.key, found)
        for _, editor in self.lists:
            found = editor.items()
            if found:
                set_dotted(spec, editor.key, found)
        return spec

    def file(self, path: str, message: str) -> bool:
        """`specTemplate.image`, `specTemplate.compute.x`, `specTemplate.ports[0].container`,
        `specTemplate.storage.pvc[0].claimInfo.size`: on its input; False when no input holds it."""
        if not path.startswith("specTemplate."):
            return False
        rest = path.removeprefix("specTemplate.")
        return any(editor.file(rest, message) for editor in self.editors()) or self.general.file(
            f"spec.{rest}", message)
