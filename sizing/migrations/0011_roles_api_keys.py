from django.conf import settings
from django.db import migrations, models
import django.db.models.deletion


def members_become_engineers(apps, schema_editor):
    apps.get_model("sizing", "Membership").objects.filter(role="member").update(role="engineer")


def engineers_become_members(apps, schema_editor):
    apps.get_model("sizing", "Membership").objects.filter(role="engineer").update(role="member")


class Migration(migrations.Migration):

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("sizing", "0010_deployment_workload"),
    ]

    operations = [
        migrations.AlterField(
            model_name="membership",
            name="role",
            field=models.CharField(
                choices=[("admin", "Admin"), ("engineer", "Engineer"), ("reviewer", "Reviewer"),
                         ("signer", "Signer"), ("sales", "Sales")],
                default="engineer", max_length=10),
        ),
        migrations.RunPython(members_become_engineers, engineers_become_members),
        migrations.CreateModel(
            name="ApiKey",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=100)),
                ("prefix", models.CharField(max_length=24, unique=True)),
                ("key_sha256", models.CharField(max_length=64)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("expires_at", models.DateTimeField(blank=True, null=True)),
                ("last_used_at", models.DateTimeField(blank=True, null=True)),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                ("user", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="api_keys",
                                           to=settings.AUTH_USER_MODEL)),
            ],
            options={"ordering": ["-created_at", "-pk"]},
        ),
    ]
