"""A template version's spec template as typed inputs, generated from the workload spec serializer of its kind
(the one the API validates the rendered spec with, registered by workloads): the spec's plain fields (image,
command, args…), its compute and security fields, and its environment variables, ports, tolerations, labels
and annotations as rows. A value may hold `{{ variable }}`: what does not read as the field's type goes as
typed, and the save's render-and-validate names any problem on its input. What no input shows (storage,
probes…) is kept as it was; the JSON view edits everything."""

from profiles.validation import spec_serializer
from studio.typed_rows import Fields, Rows, columns_of

MARK = "spec-typed"  # posted by the typed view: its inputs, not the JSON box, hold the spec
# (key, title) of the spec's objects shown as inputs, then of its lists shown as rows: (key, title, noun, columns)
OBJECTS = (("compute", "Compute"), ("security", "Security"))
LISTS = (("environmentVariables", "Environment variables", "Environment variable", ("name", "value")),
         ("ports", "Ports", "Port", ("container", "serviceType", "external", "toolType", "toolName")),
         ("tolerations", "Tolerations", "Toleration", ("key", "operator", "value", "effect", "seconds")),
         ("labels", "Labels", "Label", ("name", "value")),
         ("annotations", "Annotations", "Annotation", ("name", "value")))


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
        self.lists = [(title, Rows(key, columns_of(type(fields[key].child), only=only), noun=noun, data=bound,
                                   items=spec.get(key) or ()))
                      for key, title, noun, only in LISTS if key in fields]
        for editor in self.editors():
            self.general.rest.pop(editor.key, None)

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
                spec[editor.key] = found
        for _, editor in self.lists:
            found = editor.items()
            if found:
                spec[editor.key] = found
        return spec

    def file(self, path: str, message: str) -> bool:
        """`specTemplate.image`, `specTemplate.compute.x`, `specTemplate.ports[0].container`: on its input;
        False when no input holds it."""
        if not path.startswith("specTemplate."):
            return False
        rest = path.removeprefix("specTemplate.")
        return any(editor.file(rest, message) for editor in self.editors()) or self.general.file(
            f"spec.{rest}", message)
