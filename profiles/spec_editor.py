"""A template version's spec template as typed inputs, generated from the workload spec serializer of its kind
(the one the API validates the rendered spec with, registered by workloads): the spec's plain fields (image,
command, args…), its compute fields, and its environment variables as rows. A value may hold `{{ variable }}`:
what does not read as the field's type goes as typed, and the save's render-and-validate names any problem on its
input. What no input shows (storage, security, ports…) is kept as it was; the JSON view edits everything."""

from profiles.validation import spec_serializer
from studio.typed_rows import Fields, Rows, columns_of

MARK = "spec-typed"  # posted by the typed view: its inputs, not the JSON box, hold the spec
NESTED = ("compute", "environmentVariables")


class SpecEditor:
    def __init__(self, kind: str, *, data=None, spec=None):
        spec = spec if isinstance(spec, dict) else {}
        serializer_class = spec_serializer(kind)
        fields = serializer_class().fields if serializer_class else {}
        bound = data if data is not None and data.get(MARK) else None
        self.general = Fields("spec", columns_of(serializer_class) if serializer_class else (), data=bound,
                              value=spec)
        compute = fields.get("compute")
        self.compute = Fields("compute", columns_of(type(compute)) if compute is not None else (), data=bound,
                              value=spec.get("compute"))
        env = fields.get("environmentVariables")
        self.environment = Rows("environmentVariables",
                                columns_of(type(env.child), only=("name", "value")) if env is not None else (),
                                noun="Environment variable", data=bound,
                                items=spec.get("environmentVariables") or ())
        for key in NESTED:
            self.general.rest.pop(key, None)

    @property
    def kept(self) -> list[str]:
        return sorted(self.general.rest)

    def value(self) -> dict:
        spec = self.general.value()
        compute = self.compute.value()
        if compute:
            spec["compute"] = compute
        environment = self.environment.items()
        if environment:
            spec["environmentVariables"] = environment
        return spec

    def file(self, path: str, message: str) -> bool:
        """`specTemplate.image`, `specTemplate.compute.x`, `specTemplate.environmentVariables[0].value`: on its
        input; False when no input holds it."""
        if not path.startswith("specTemplate."):
            return False
        rest = path.removeprefix("specTemplate.")
        return (self.compute.file(rest, message) or self.environment.file(rest, message)
                or self.general.file(f"spec.{rest}", message))
