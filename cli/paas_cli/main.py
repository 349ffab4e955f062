"""`studio`: log in, choose a project, and submit, list, describe, follow and manage workloads.

Every command talks to the server's HTTP API (the Run:ai-compatible workloads API) with the bearer token that
`studio login` got for an access key or through single sign-on (paas_cli.sso). Exit codes: paas_cli.client."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import click

from paas_cli import __version__, output
from paas_cli.client import Api, CliError
from paas_cli.common import KINDS, Root, output_option, project_named, session
from paas_cli.config import Config
from paas_cli.sso import device_login
from paas_cli.workload_commands import kind_group


@click.group(cls=Root, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="studio")
def cli():
    """PaaS Studio's command line: `studio login`, then `studio training submit NAME -i IMAGE …`."""


# --- login, logout, config -------------------------------------------------------------------------------------

@cli.command()
@click.option("--url", metavar="URL", help="The server, e.g. https://studio.example.com (default: the last one).")
@click.option("--client-id", envvar="STUDIO_CLIENT_ID", metavar="ID", help="The access key's client id "
              "(or STUDIO_CLIENT_ID).")
@click.option("--client-secret", envvar="STUDIO_CLIENT_SECRET", metavar="SECRET",
              help="The access key's secret (or STUDIO_CLIENT_SECRET; asked for when absent).")
@click.option("--sso", is_flag=True, help="Single sign-on: approve a code in the browser (opened when possible).")
@click.option("--device", is_flag=True, help="As --sso, without opening a browser: open the printed page on any "
              "device.")
@output_option
def login(url, client_id, client_secret, sso, device, fmt):
    """Log in with an access key (the portal's Access keys, or POST /api/v1/access-keys), or with --sso."""
    config = Config.load()
    url = (url or config.url or "").rstrip("/")
    if not url:
        raise click.UsageError("no server: pass --url URL (or set STUDIO_URL)")
    api = Api(url)
    if sso or device:
        if client_id:
            raise click.UsageError("--sso and --device sign in through the browser: drop --client-id")
        granted = device_login(api, open_browser=not device)
        token, lifetime = granted["access_token"], granted.get("expires_in")
    else:
        client_id = client_id or click.prompt("Client id")
        client_secret = client_secret or click.prompt("Client secret", hide_input=True)
        granted = api.post("/api/v1/token", {"grantType": "client_credentials", "clientId": client_id,
                                             "clientSecret": client_secret}, auth=False)
        token, lifetime = granted["accessToken"], granted.get("expiresIn")
    api.token = token
    me = api.get("/api/v1/me")
    expires = datetime.now(timezone.utc) + timedelta(seconds=int(lifetime or 0))
    config.values.update(url=url, token=token, clientId=client_id,
                         expiresAt=expires.replace(microsecond=0).isoformat())
    config.save()
    result = {"url": url, "username": me.get("username"), "clientId": client_id,
              "expiresAt": config.values["expiresAt"], "config": str(config.path)}
    output.emit(result, fmt, lambda r: click.echo(
        f"Logged in to {r['url']} as {r['username']} (until {r['expiresAt']}; saved in {r['config']})"))


@cli.command()
@output_option
def logout(fmt):
    """Revoke the saved token and forget it."""
    config = Config.load()
    token = config.values.get("token")
    if token and config.url:
        try:
            Api(config.url, token).request("POST", "/api/v1/token/revoke")
        except CliError:
            pass  # an expired or revoked token: forgetting it is all that is left to do
    config.values.pop("token", None)
    config.values.pop("expiresAt", None)
    config.save()
    output.emit({"loggedOut": True, "config": str(config.path)}, fmt, lambda r: click.echo("Logged out."))


@cli.group("config")
def config_group():
    """The default project, and what the CLI is set to."""


@config_group.command("project")
@click.argument("name")
@output_option
def config_project(name, fmt):
    """Make NAME the default project of later commands."""
    config, api = session()
    project = project_named(api, name)
    config.values["project"] = name
    config.save()
    result = {"project": name, "projectId": project.get("id"), "clusterId": project.get("clusterId")}
    output.emit(result, fmt, lambda r: click.echo(f"Default project: {name} (id {r['projectId']})"))


@config_group.command("show")
@output_option
def config_show(fmt):
    """The server, the project and whether a token is set (never the token itself)."""
    config = Config.load()
    result = {"config": str(config.path), "url": config.url, "urlFrom": config.source_of("url"),
              "project": config.project, "projectFrom": config.source_of("project"),
              "loggedIn": bool(config.token), "tokenFrom": config.source_of("token"),
              "clientId": config.values.get("clientId"), "expiresAt": config.values.get("expiresAt")}
    output.emit(result, fmt, lambda r: output.pairs([
        ("Config file", r["config"]), ("Server", f"{r['url'] or '-'} ({r['urlFrom']})"),
        ("Project", f"{r['project'] or '-'} ({r['projectFrom']})"),
        ("Logged in", f"yes ({r['tokenFrom']})" if r["loggedIn"] else "no"),
        ("Client id", r["clientId"] or "-"), ("Token expires", r["expiresAt"] or "-")]))


for _kind in KINDS:
    cli.add_command(kind_group(_kind))


def main() -> None:
    cli(prog_name="studio")


if __name__ == "__main__":
    main()
