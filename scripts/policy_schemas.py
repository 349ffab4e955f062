"""Extract the Policy schemas of Run:ai's OpenAPI document into policies/schema/runai-policy.json.

    python scripts/policy_schemas.py ../shared/runai/runai-openapi-2.18.json ../shared/runai/runai-openapi-latest.json

Takes every component schema reachable from the Policy operations of 2.18 and adds the two rule
fields that later versions define (the API's fields are the union of both versions):
`options` of ArrayRules (a set the items of an array must come from) and `isFallback` of SourceOfRule."""

import json
import sys

ROOTS = [f"{kind}{suffix}" for kind in ("Training", "Workspace", "Inference")
         for suffix in ("PolicyV2", "PolicyChangeRequestV2", "PolicyOverwriteRequestV2")] + ["PolicyListResponse"]
FROM_LATEST = {"ArrayRules": "options", "SourceOfRule": "isFallback"}


def reachable(schemas: dict, roots: list[str]) -> dict:
    seen: dict = {}

    def visit(node):
        if isinstance(node, dict):
            ref = node.get("$ref")
            if ref:
                name = ref.rsplit("/", 1)[-1]
                if name not in seen:
                    seen[name] = schemas[name]
                    visit(schemas[name])
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    for root in roots:
        visit({"$ref": f"#/components/schemas/{root}"})
    return seen


def main(path_218: str, path_latest: str) -> None:
    schemas = json.load(open(path_218))["components"]["schemas"]
    latest = json.load(open(path_latest))["components"]["schemas"]
    out = reachable(schemas, ROOTS)
    for name, field in FROM_LATEST.items():
        out[name]["properties"][field] = latest[name]["properties"][field]
    out.update({name: latest[name] for name in reachable(latest, list(FROM_LATEST)) if name not in out})
    document = {"source": "Run:ai control-plane OpenAPI 2.18, tag Policy (+ ArrayRules.options, "
                          "SourceOfRule.isFallback from the latest version)",
                "components": {"schemas": dict(sorted(out.items()))}}
    json.dump(document, open("policies/schema/runai-policy.json", "w"), indent=1, sort_keys=False)
    print(f"{len(out)} schemas")


if __name__ == "__main__":
    main(*sys.argv[1:3])
