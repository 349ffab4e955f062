"""Access rules replace project memberships: Run:ai's predefined roles, each mapped to a level; every
membership becomes a project-scope rule of its level's default role; the `platform-admins` group becomes a
group subject holding "System administrator" at tenant scope."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# Run:ai's predefined roles (ids are ours and stable), each with the level it grants in PaaS Studio.
ROLES = [
    ("System administrator", "admin", "Manages the whole tenant: clusters, departments, projects, users and access rules."),
    ("Department administrator", "admin", "Manages the departments and projects in its scope and their access rules."),
    ("Editor", "admin", "Manages the projects in its scope: their members and every workload."),
    ("Research manager", "member", "Submits and manages workloads of the projects in its scope."),
    ("L1 researcher", "member", "Submits and manages workloads of the projects in its scope."),
    ("L2 researcher", "member", "Submits and manages workloads of the projects in its scope, without asset management."),
    ("ML engineer", "member", "Submits and manages inference workloads of the projects in its scope."),
    ("Department viewer", "viewer", "Reads the departments and projects in its scope."),
    ("Viewer", "viewer", "Reads everything in its scope."),
    ("Environments administrator", "viewer", "Manages environment assets; reads the projects in its scope."),
    ("Compute resource administrator", "viewer", "Manages compute resource assets; reads the projects in its scope."),
    ("Data source administrator", "viewer", "Manages data source assets; reads the projects in its scope."),
    ("Template administrator", "viewer", "Manages templates; reads the projects in its scope."),
    ("Credentials administrator", "viewer", "Manages credentials; reads the projects in its scope."),
]
DEFAULT_ROLE_OF_LEVEL = {"admin": "Editor", "member": "L1 researcher", "viewer": "Viewer"}


def roles_and_rules_from_memberships(apps, schema_editor):
    Role = apps.get_model("studio", "Role")
    AccessRule = apps.get_model("studio", "AccessRule")
    Membership = apps.get_model("studio", "Membership")
    for name, level, description in ROLES:
        Role.objects.update_or_create(name=name, defaults={"level": level, "description": description})
    by_name = {role.name: role for role in Role.objects.all()}
    AccessRule.objects.bulk_create([
        AccessRule(subject_type="user", subject_id=m.user.username, user_id=m.user_id,
                   role=by_name[DEFAULT_ROLE_OF_LEVEL[m.role]], scope_type="project", scope_id=str(m.project_id),
                   project_id=m.project_id, created_by="migration")
        for m in Membership.objects.select_related("user")
    ])
    AccessRule.objects.get_or_create(
        subject_type="group", subject_id="platform-admins", role=by_name["System administrator"],
        scope_type="tenant", scope_id="1", defaults={"created_by": "migration"},
    )


def memberships_from_rules(apps, schema_editor):
    Membership = apps.get_model("studio", "Membership")
    AccessRule = apps.get_model("studio", "AccessRule")
    rank = {"viewer": 1, "member": 2, "admin": 3}
    best = {}
    for rule in AccessRule.objects.filter(scope_type="project", subject_type="user").select_related("role"):
        key = (rule.user_id, rule.project_id)
        if rank[rule.role.level] > rank[best.get(key, "viewer")] or key not in best:
            best[key] = rule.role.level
    Membership.objects.bulk_create([Membership(user_id=u, project_id=p, role=level) for (u, p), level in best.items()])


class Migration(migrations.Migration):

    dependencies = [
        ('studio', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Role',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=100, unique=True)),
                ('description', models.TextField(blank=True, default='')),
                ('level', models.CharField(choices=[('admin', 'Admin'), ('member', 'Member'), ('viewer', 'Viewer')], max_length=8)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
            ],
            options={
                'ordering': ['id'],
            },
        ),
        migrations.CreateModel(
            name='AccessRule',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('subject_type', models.CharField(choices=[('user', 'User'), ('group', 'Group'), ('app', 'App')], max_length=8)),
                ('subject_id', models.CharField(max_length=255)),
                ('scope_type', models.CharField(choices=[('system', 'System'), ('tenant', 'Tenant'), ('cluster', 'Cluster'), ('department', 'Department'), ('project', 'Project')], max_length=12)),
                ('scope_id', models.CharField(max_length=64)),
                ('created_by', models.CharField(blank=True, default='', max_length=150)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('cluster', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='access_rules', to='studio.cluster')),
                ('department', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='access_rules', to='studio.department')),
                ('project', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='access_rules', to='studio.project')),
                ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='access_rules', to=settings.AUTH_USER_MODEL)),
                ('role', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='access_rules', to='studio.role')),
            ],
            options={
                'ordering': ['id'],
            },
        ),
        migrations.AddIndex(
            model_name='accessrule',
            index=models.Index(fields=['subject_type', 'subject_id'], name='studio_acce_subject_3eecc1_idx'),
        ),
        migrations.AddIndex(
            model_name='accessrule',
            index=models.Index(fields=['scope_type', 'scope_id'], name='studio_acce_scope_t_b91467_idx'),
        ),
        migrations.AddConstraint(
            model_name='accessrule',
            constraint=models.UniqueConstraint(fields=('subject_type', 'subject_id', 'role', 'scope_type', 'scope_id'), name='one_access_rule_per_subject_role_scope'),
        ),
        migrations.RunPython(roles_and_rules_from_memberships, memberships_from_rules),
        migrations.DeleteModel(
            name='Membership',
        ),
    ]
