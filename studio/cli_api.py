"""Run:ai's Researcher Command Line Interface operations, for PaaS Studio's CLI (`cli/`, the `studio` command):
installer scripts and their one-line commands, the CLI itself, and its manual.

Run:ai serves a binary per operating system and architecture; ours is a pure-Python wheel (studio/cli_dist.py),
so `dist/{operatingSystem}/{architecture}/runai` answers the same file for every pair it knows (a name outside
Run:ai's `linux`, `windows`, `darwin`, or an architecture Python does not run on, is a 404), named by its
Content-Disposition. The scripts install it into a virtual environment of its own (~/.local/share/paas-studio/cli,
linked as ~/.local/bin/studio), which works where `pip install --user` is refused (PEP 668).

Anyone may download (Run:ai's document lists a 401): the CLI is needed before its user has a token to log in
with, and it holds nothing but this repository's code. Paths at latest's `cli-exposer/` and at 2.18's `cli/`
(deprecated in latest, as there)."""

from __future__ import annotations

import re
import shlex

import markdown
import nh3
from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.cli_dist import wheel

TAG = "Researcher Command Line Interface"
SYSTEMS = ("linux", "windows", "darwin")
# Run:ai's names (amd64, arm64) and what `uname -m` says on the same machines; the wheel runs on any of them.
ARCHITECTURES = ("amd64", "arm64", "x86_64", "aarch64", "ppc64le", "s390x")
SCRIPT_SYSTEM = {"unix": "linux", "linux": "linux", "mac": "darwin"}
DOCUMENTS = {"cli.md": "cli.md"}
DOCUMENT_NAME = re.compile(r"^[A-Za-z0-9_]+\.md$")


class CommandSerializer(serializers.Serializer):
    command = serializers.CharField(help_text="The commands that install the CLI.")


def _base(request) -> str:
    return request.build_absolute_uri("/").rstrip("/")


def _script(request, platform: str) -> str:
    base, built = _base(request), wheel()
    system = SCRIPT_SYSTEM[platform]
    return f"""#!/bin/sh
# PaaS Studio's command line (`studio`) {built.version} from {base}: a Python wheel installed into a virtual
# environment of its own, linked as $BIN_DIR/studio. Needs python3 (3.9 or later, with venv) and curl.
set -eu
SERVER={shlex.quote(base)}
WHEEL={shlex.quote(built.filename)}
CLI_HOME="${{STUDIO_CLI_HOME:-$HOME/.local/share/paas-studio/cli}}"
BIN_DIR="${{STUDIO_CLI_BIN:-$HOME/.local/bin}}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
curl -fsSL -o "$tmp/$WHEEL" "$SERVER/api/v1/cli-exposer/dist/{system}/$(uname -m)/runai"
python3 -m venv "$CLI_HOME"
"$CLI_HOME/bin/python" -m pip install -q --upgrade "$tmp/$WHEEL"
mkdir -p "$BIN_DIR"
ln -sf "$CLI_HOME/bin/studio" "$BIN_DIR/studio"
echo "Installed $("$BIN_DIR/studio" --version) as $BIN_DIR/studio"
echo "Next: studio login --url $SERVER --client-id <your access key's client id>"
"""


def _command(request, platform: str) -> str:
    base, built = _base(request), wheel()
    if platform == "windows":
        return (f"Invoke-WebRequest -Uri {base}/api/v1/cli-exposer/dist/windows/amd64/runai -OutFile "
                f"{built.filename}; py -m pip install --user .\\{built.filename}")
    return f"curl -fsSL {base}/api/v1/cli-exposer/installer/{platform} | sh"


class _CliView(APIView):
    authentication_classes = []  # a stale token in the header must not turn a public download into a 401
    permission_classes = [AllowAny]


def _schema(operation: str, summary: str, deprecated: bool, **kwargs):
    return extend_schema(operation_id=operation + ("_deprecated" if deprecated else ""), summary=summary,
                         tags=[TAG + (" Deprecated" if deprecated else "")], deprecated=deprecated, auth=[],
                         **kwargs)


def installer_view(platform: str, deprecated: bool) -> type[APIView]:
    class InstallerView(_CliView):
        @_schema(f"get_installer_{platform}", f"Download the {platform} installer script of the CLI.", deprecated,
                 responses={(200, "text/plain"): OpenApiResponse(OpenApiTypes.STR)})
        def get(self, request):
            return HttpResponse(_script(request, platform), content_type="text/plain; charset=utf-8")

    InstallerView.__name__ = f"Installer{platform.capitalize()}{'Deprecated' if deprecated else ''}View"
    return InstallerView


def commands_view(platform: str, deprecated: bool) -> type[APIView]:
    class CommandsView(_CliView):
        @_schema(f"get_installer_{platform}_commands", f"The commands that install the CLI on {platform}.",
                 deprecated, responses={200: CommandSerializer})
        def get(self, request):
            return Response({"command": _command(request, platform)})

    CommandsView.__name__ = f"Commands{platform.capitalize()}{'Deprecated' if deprecated else ''}View"
    return CommandsView


def binary_view(deprecated: bool) -> type[APIView]:
    class BinaryView(_CliView):
        @_schema("get_binary", "Download the CLI: a Python wheel, the same for every system and architecture.",
                 deprecated, parameters=[
                     OpenApiParameter("operatingSystem", str, OpenApiParameter.PATH, enum=list(SYSTEMS)),
                     OpenApiParameter("architecture", str, OpenApiParameter.PATH,
                                      description=f"One of {', '.join(ARCHITECTURES)}.")],
                 responses={(200, "application/octet-stream"): OpenApiResponse(OpenApiTypes.BINARY)})
        def get(self, request, operatingSystem, architecture):
            if operatingSystem not in SYSTEMS:
                raise NotFound(f"No CLI for operating system {operatingSystem!r}: one of {', '.join(SYSTEMS)}.")
            if architecture not in ARCHITECTURES:
                raise NotFound(f"No CLI for architecture {architecture!r}: one of {', '.join(ARCHITECTURES)}.")
            built = wheel()
            response = HttpResponse(built.content, content_type="application/octet-stream")
            response["Content-Disposition"] = f'attachment; filename="{built.filename}"'
            response["ETag"] = f'"{built.sha256}"'
            return response

    BinaryView.__name__ = f"Binary{'Deprecated' if deprecated else ''}View"
    return BinaryView


def document_view(deprecated: bool) -> type[APIView]:
    class DocumentView(_CliView):
        @_schema("get_manual_document", "The CLI's manual (documentName cli.md) as HTML.", deprecated,
                 parameters=[OpenApiParameter("documentName", str, OpenApiParameter.PATH, pattern=DOCUMENT_NAME.pattern)],
                 responses={(200, "text/html"): OpenApiResponse(OpenApiTypes.STR)})
        def get(self, request, documentName):
            if not DOCUMENT_NAME.match(documentName) or documentName not in DOCUMENTS:
                raise NotFound(f"No CLI document {documentName!r}: one of {', '.join(DOCUMENTS)}.")
            try:
                source = (settings.BASE_DIR / "docs" / DOCUMENTS[documentName]).read_text()
            except FileNotFoundError as exc:  # an installation without docs/
                raise NotFound(f"The CLI document {documentName!r} is not installed on this server.") from exc
            body = nh3.clean(markdown.markdown(source, extensions=["fenced_code", "tables"]))
            page = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>PaaS Studio CLI</title>'
                    f"</head><body>{body}</body></html>")
            return HttpResponse(page, content_type="text/html; charset=utf-8")

    DocumentView.__name__ = f"Document{'Deprecated' if deprecated else ''}View"
    return DocumentView


def cli_urls() -> list:
    """The routes under /api/v1/: latest's `cli-exposer/…`, and 2.18's `cli/…` (deprecated)."""
    from django.urls import path

    routes = []
    for prefix, deprecated in (("cli-exposer", False), ("cli", True)):
        suffix = "-deprecated" if deprecated else ""
        for platform in ("unix", "mac", "linux"):
            routes.append(path(f"{prefix}/installer/{platform}", installer_view(platform, deprecated).as_view(),
                               name=f"cli-installer-{platform}{suffix}"))
        for platform in ("unix", "mac", "linux", "windows"):
            routes.append(path(f"{prefix}/installer/{platform}/commands",
                               commands_view(platform, deprecated).as_view(),
                               name=f"cli-installer-{platform}-commands{suffix}"))
        routes.append(path(f"{prefix}/dist/<str:operatingSystem>/<str:architecture>/runai",
                           binary_view(deprecated).as_view(), name=f"cli-binary{suffix}"))
        routes.append(path(f"{prefix}/docs/<str:documentName>", document_view(deprecated).as_view(),
                           name=f"cli-document{suffix}"))
    return routes
