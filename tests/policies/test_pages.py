"""The policy pages: the list, the edit form with each problem at its field, the effective view of a project."""

import json
import re

import pytest

from policies.models import Policy

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, org):
    client.force_login(org.users.platform_admin)
    return client


def test_the_list_shows_the_built_in_default_and_stored_policies(admin_client, org):
    Policy.objects.create(policy_type="trainings", scope="project", project=org.a, scope_key=f"project:{org.a.pk}",
                          name="alpha-limits", rules={"compute": {"gpuDevicesRequest": {"max": 1}}})
    page = admin_client.get("/policies")
    assert page.status_code == 200
    text = page.content.decode()
    assert "tenant default" in text and "alpha-limits" in text and "project alpha" in text
    assert f"/policies/trainings/edit?scope=project&amp;projectId={org.a.pk}" in text
    assert 'href="/policies"' in admin_client.get("/").content.decode()  # in the nav


def test_the_json_view_saves_and_shows_each_problem_at_its_field(admin_client, org):
    url = f"/policies/workspaces/edit?scope=project&projectId={org.a.pk}&view=json"
    page = admin_client.get(url)
    assert page.status_code == 200 and b"no policy of its own yet" in page.content
    assert b"security.runAsUid" in page.content  # the effective rules, from the built-in default
    bad = admin_client.post(url, {"name": "alpha", "view": "json",
                                  "rules": json.dumps({"security": {"runAsUid": {"min": "x"}}}), "defaults": "{not json"})
    text = bad.content.decode()
    assert bad.status_code == 200 and 'id="f-defaults-errors"' in text and "Not valid JSON" in text
    bad = admin_client.post(url, {"name": "alpha", "view": "json",
                                  "rules": json.dumps({"security": {"runAsUid": {"min": "x"}}}),
                                  "defaults": json.dumps({"nosuch": 1})})
    text = bad.content.decode()
    assert 'id="f-rules-errors"' in text and "policy.rules.security.runAsUid.min" in text
    assert 'id="f-defaults-errors"' in text and "policy.defaults.nosuch: Unknown field" in text
    good = admin_client.post(url, {"name": "alpha", "view": "json",
                                   "rules": json.dumps({"security": {"hostNetwork": {"canEdit": True}}}),
                                   "defaults": "{}"})
    assert good.status_code == 302
    assert Policy.objects.get(scope_key=f"project:{org.a.pk}").rules == {"security": {"hostNetwork": {"canEdit": True}}}
    effective = admin_client.get(f"/projects/{org.a.pk}/policy").content.decode()
    assert "privileged" in effective and "project alpha" in effective
    deleted = admin_client.post(f"/policies/workspaces/delete?scope=project&projectId={org.a.pk}", follow=True)
    assert b"the wider ones apply" in deleted.content and not Policy.objects.exists()


def _form_of(page) -> dict:
    """The typed form's fields as the browser would post them (every input and select, with its value)."""
    import re
    from html import unescape

    text = page.content.decode()
    fields = {unescape(n): unescape(v) for n, v in re.findall(r'<input[^>]*name="([^"]+)" value="([^"]*)"', text)}
    for name, body in re.findall(r'<select[^>]*name="([^"]+)"[^>]*>(.*?)</select>', text, re.S):
        chosen = re.search(r'<option value="([^"]*)" selected', body)
        fields[unescape(name)] = unescape(chosen.group(1)) if chosen else ""
    for name, body in re.findall(r'<textarea[^>]*name="([^"]+)"[^>]*>(.*?)</textarea>', text, re.S):
        fields[unescape(name)] = unescape(body)
    fields.pop("csrfmiddlewaretoken", None)
    return fields


def test_the_typed_form_is_generated_from_the_schema_and_saves_typed_values(admin_client, org):
    Policy.objects.create(policy_type="trainings", scope="project", project=org.a, scope_key=f"project:{org.a.pk}",
                          name="alpha-limits", rules={"compute": {"gpuDevicesRequest": {"max": 2}}},
                          defaults={"environmentVariables": {"instances": [{"name": "LOG", "value": "1"}]}})
    url = f"/policies/trainings/edit?scope=project&projectId={org.a.pk}"
    page = admin_client.get(url)
    text = page.content.decode()
    assert page.status_code == 200 and 'name="rules"' not in text  # no JSON box in the form view
    fields = _form_of(page)
    # a row per field of Run:ai's training policy, each rule attribute the schema gives it
    assert fields["r:compute.gpuDevicesRequest:max"] == "2"
    assert {"r:security.runAsUid:min", "r:image:options", "r:storage.hostPath.instances:canAdd",
            "d:imagePullPolicy", "d:compute.gpuDevicesRequest"} <= set(fields)
    assert "r:image:min" not in fields  # a string has no bounds
    assert '<option value="IfNotPresent">' in text  # the schema's enum, as a choice
    fields.update({"r:compute.gpuDevicesRequest:max": "4", "r:security.runAsUid:min": "1000",
                   "r:image:options": "nvcr.io/nvidia/pytorch:24.05 = PyTorch\nubuntu:22.04",
                   "r:security.hostNetwork:canEdit": "false", "d:compute.gpuDevicesRequest": "1",
                   "d:imagePullPolicy": "Always", "r:storage.hostPath.instances:canAdd": "true"})
    saved = admin_client.post(url, fields)
    assert saved.status_code == 302, saved.content.decode()[:2000]
    policy = Policy.objects.get(scope_key=f"project:{org.a.pk}")
    assert policy.rules == {
        "compute": {"gpuDevicesRequest": {"max": 4}}, "security": {"runAsUid": {"min": 1000},
                                                                    "hostNetwork": {"canEdit": False}},
        "image": {"options": [{"value": "nvcr.io/nvidia/pytorch:24.05", "displayed": "PyTorch"},
                              {"value": "ubuntu:22.04"}]},
        "storage": {"hostPath": {"instances": {"canAdd": True}}}}
    # what the form does not show (a list field's default instances) is kept
    assert policy.defaults == {"compute": {"gpuDevicesRequest": 1}, "imagePullPolicy": "Always",
                               "environmentVariables": {"instances": [{"name": "LOG", "value": "1"}]}}
    # emptying a cell removes the rule, and the objects it leaves empty
    fields = _form_of(admin_client.get(url))
    fields["r:security.hostNetwork:canEdit"] = ""
    assert admin_client.post(url, fields).status_code == 302
    assert "hostNetwork" not in Policy.objects.get(scope_key=f"project:{org.a.pk}").rules["security"]


def test_the_typed_form_shows_every_problem_at_once_each_at_its_field(admin_client, org):
    url = f"/policies/trainings/edit?scope=project&projectId={org.a.pk}"
    fields = _form_of(admin_client.get(url))
    fields.update({"r:security.runAsUid:min": "zero", "r:compute.gpuDevicesRequest:max": "many",
                   "d:compute.cpuCoreRequest": "lots"})
    bad = admin_client.post(url, fields)
    text = bad.content.decode()
    assert bad.status_code == 200 and not Policy.objects.exists()
    assert "3 fields to fix" in text
    for name in ("r:security.runAsUid:min", "r:compute.gpuDevicesRequest:max", "d:compute.cpuCoreRequest"):
        cell = re.search(rf'name="{re.escape(name)}"[^>]*aria-invalid="true" aria-describedby="e-([^"]+)"', text)
        assert cell, name
        assert f'id="e-{cell.group(1)}"' in text
    assert "policy.rules.security.runAsUid.min" in text and "policy.defaults.compute.cpuCoreRequest" in text
    assert 'value="zero"' in text  # what was typed stays


def test_pages_are_for_platform_admins_and_members_read_their_projects_effective_policy(client, org):
    client.force_login(org.users.member)
    assert client.get("/policies").status_code == 403
    assert client.get("/policies/trainings/edit?scope=tenant").status_code == 403
    assert client.post("/policies/trainings/delete?scope=tenant").status_code == 403
    page = client.get(f"/projects/{org.a.pk}/policy")
    assert page.status_code == 200 and b"baseline" in page.content and b"edit project policy" not in page.content
    assert client.get(f"/projects/{org.b.pk}/policy").status_code == 404


def test_the_policies_list_is_a_table_with_export_and_bulk_delete(admin_client, org):
    import csv
    import io

    for number in (10, 2):
        Policy.objects.create(policy_type="trainings", scope="project", project=org.a if number == 2 else org.b,
                              scope_key=f"project:{(org.a if number == 2 else org.b).pk}", name=f"limits-{number}",
                              rules={"compute": {"gpuDevicesRequest": {"max": 1}}, "security": {"runAsUid": {"min": 1}}},
                              defaults={"compute": {"gpuDevicesRequest": 1}})
    page = admin_client.get("/policies?sortBy=name").content.decode()
    assert re.findall(r'aria-label="Select ([^"]+)"', page)[1:] == ["limits-2", "limits-10"]
    response = admin_client.get("/policies/export.csv?sortBy=name")
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == ["Policy", "Type", "Scope", "Rules", "Defaults", "Updated", "By"]
    assert [row[:5] for row in rows[1:]] == [["limits-2", "trainings", "project alpha", "2", "1"],
                                             ["limits-10", "trainings", "project beta", "2", "1"]]
    ids = [str(p.pk) for p in Policy.objects.all()]
    done = admin_client.post("/policies/bulk", {"action": "delete", "ids": ids}, follow=True).content.decode()
    assert not Policy.objects.exists() and "Deleted 2 policies" in done


def test_a_list_fields_default_instances_are_typed_rows_with_errors_on_their_cells(admin_client, org):
    Policy.objects.create(policy_type="workspaces", scope="project", project=org.a, scope_key=f"project:{org.a.pk}",
                          name="alpha-defaults", rules={}, defaults={
                              "environmentVariables": {"instances": [{"name": "LOG", "value": "1"}]},
                              "storage": {"pvc": {"instances": [{"claimName": "data", "path": "/data",
                                                                 "claimInfo": {"accessModes": {"readWriteOnce": True}}}]}}})
    url = f"/policies/workspaces/edit?scope=project&projectId={org.a.pk}"
    page = admin_client.get(url)
    fields = _form_of(page)
    # rows generated from the schema of the list's items: a nested object's fields as columns of their own
    assert fields["environmentVariables.instances-0-name"] == "LOG"
    assert fields["storage.pvc.instances-0-claimName"] == "data"
    assert {"storage.pvc.instances-1-claimInfo.size", "storage.nfs.instances-0-server",
            "ports.instances-0-container", "tolerations.instances-0-operator"} <= set(fields)
    assert 'name="defaults"' not in page.content.decode()  # no JSON box
    fields.update({"environmentVariables.instances-0-value": "2", "environmentVariables.instances-1-name": "MODE",
                   "environmentVariables.instances-1-value": "fast", "storage.pvc.instances-1-path": "/scratch",
                   "storage.pvc.instances-1-claimInfo.size": "10Gi", "ports.instances-0-container": "http",
                   "storage.nfs.instances-0-server": "nfs.example", "storage.nfs.instances-0-readOnly": "maybe"})
    bad = admin_client.post(url, fields)
    text = bad.content.decode()
    assert bad.status_code == 200 and not Policy.objects.get(scope_key=f"project:{org.a.pk}").defaults.get("ports")
    assert "2 fields to fix" in text
    for name in ("ports.instances-0-container", "storage.nfs.instances-0-readOnly"):
        assert re.search(rf'name="{re.escape(name)}"[^>]*aria-invalid="true"', text), name
    assert 'value="http"' in text and 'value="10Gi"' in text  # what was typed stays
    fields = _form_of(bad)
    fields.update({"ports.instances-0-container": "8888", "storage.nfs.instances-0-readOnly": "true",
                   "storage.nfs.instances-0-path": "/exports", "storage.nfs.instances-0-mountPath": "/mnt"})
    saved = admin_client.post(url, fields)
    assert saved.status_code == 302, saved.content.decode()[:2000]
    defaults = Policy.objects.get(scope_key=f"project:{org.a.pk}").defaults
    assert defaults["environmentVariables"] == {"instances": [{"name": "LOG", "value": "2"},
                                                              {"name": "MODE", "value": "fast"}]}
    assert defaults["storage"]["pvc"] == {"instances": [
        {"claimName": "data", "path": "/data", "claimInfo": {"accessModes": {"readWriteOnce": True}}},  # kept
        {"path": "/scratch", "claimInfo": {"size": "10Gi"}}]}
    assert defaults["storage"]["nfs"] == {"instances": [{"server": "nfs.example", "readOnly": True,
                                                         "path": "/exports", "mountPath": "/mnt"}]}
    assert defaults["ports"] == {"instances": [{"container": 8888}]}
    # every row emptied: the default instances are gone
    fields = _form_of(admin_client.get(url))
    for key in [k for k in fields if k.startswith("environmentVariables.instances-") and k[-5:] != "-rows"]:
        fields[key] = ""
    assert admin_client.post(url, fields).status_code == 302
    assert "environmentVariables" not in Policy.objects.get(scope_key=f"project:{org.a.pk}").defaults


def test_an_items_lists_of_strings_and_objects_two_deep_are_editable_cells(admin_client, org):
    """An exposed URL's authorized users and groups (lists inside an item) as comma-separated cells, a PVC's
    access modes (an object two deep) as cells of their own: shown, edited, saved, their errors on the cell."""
    Policy.objects.create(policy_type="workspaces", scope="project", project=org.a, scope_key=f"project:{org.a.pk}",
                          name="alpha-defaults", rules={}, defaults={
                              "exposedUrls": {"instances": [{"container": 8888, "authorizedUsers": ["ann"]}]},
                              "storage": {"pvc": {"instances": [{"path": "/data",
                                                                 "claimInfo": {"accessModes": {"readWriteOnce": True}}}]}}})
    url = f"/policies/workspaces/edit?scope=project&projectId={org.a.pk}"
    fields = _form_of(admin_client.get(url))
    assert fields["exposedUrls.instances-0-authorizedUsers"] == "ann"
    assert fields["storage.pvc.instances-0-claimInfo.accessModes.readWriteOnce"] == "true"
    assert not fields.get("exposedUrls.instances-0-__rest__") and not fields.get("storage.pvc.instances-0-__rest__")
    fields.update({"exposedUrls.instances-0-authorizedUsers": "ann, bob",
                   "exposedUrls.instances-0-authorizedGroups": "ml",
                   "storage.pvc.instances-0-claimInfo.accessModes.readWriteOnce": "",
                   "storage.pvc.instances-0-claimInfo.accessModes.readWriteMany": "maybe"})
    bad = admin_client.post(url, fields)
    text = bad.content.decode()
    assert bad.status_code == 200 and "1 field to fix" in text
    assert re.search(r'name="storage\.pvc\.instances-0-claimInfo\.accessModes\.readWriteMany"[^>]*aria-invalid="true"',
                     text)
    fields = _form_of(bad)
    assert fields["exposedUrls.instances-0-authorizedUsers"] == "ann, bob"  # what was typed stays
    fields["storage.pvc.instances-0-claimInfo.accessModes.readWriteMany"] = "true"
    assert admin_client.post(url, fields).status_code == 302
    answer = admin_client.get(f"/api/v2/policy/workspaces?scope=project&projectId={org.a.pk}").json()
    defaults = answer["policy"]["defaults"]
    assert defaults["exposedUrls"] == {"instances": [{"container": 8888, "authorizedUsers": ["ann", "bob"],
                                                      "authorizedGroups": ["ml"]}]}
    assert defaults["storage"]["pvc"] == {"instances": [
        {"path": "/data", "claimInfo": {"accessModes": {"readWriteMany": True}}}]}
