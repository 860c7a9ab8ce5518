"""Give every stored fingerprint its host: the uploads of each deployment, oldest first, go through the same rules as
a new upload (sizing.fingerprint.identity.host_for): versions of one host only when their GPUs' UUIDs match, or,
without UUIDs, their host names. The uploads that were stored as "unnamed host" without GPU UUIDs become hosts of
their own, named after their GPUs ("1× NVIDIA GeForce RTX 3060 Laptop GPU · #1"). No machine is chosen: a person
chooses them (a report never falls back to the newest upload)."""

from django.db import migrations

from sizing.fingerprint.identity import KnownHost, host_for, identity_from_facts


def assign_host_keys(apps, schema_editor):
    Fingerprint = apps.get_model("sizing", "Fingerprint")
    # order_by(): the model's ordering would put captured_at into the DISTINCT and repeat deployments
    deployment_ids = Fingerprint.objects.order_by().values_list("deployment_id", flat=True).distinct()
    for deployment_id in deployment_ids:
        rows = list(Fingerprint.objects.filter(deployment_id=deployment_id).order_by("captured_at", "pk"))
        hosts: dict[str, dict] = {}  # key → {"name", "named", "identities"}, in the order created
        for row in rows:
            facts = row.facts if isinstance(row.facts, dict) else {}
            identity = identity_from_facts(facts, given_name=row.host)
            known = [KnownHost(key=key, name=host["name"], named=host["named"], identities=tuple(host["identities"]))
                     for key, host in reversed(list(hosts.items()))]  # newest first
            choice = host_for(facts, identity, upload_sha256=row.sha256 or f"{row.pk:064d}", known=known)
            host = hosts.setdefault(choice.key, {"name": choice.name, "named": choice.named, "identities": []})
            host["name"], host["named"] = choice.name, choice.named
            host["identities"].append(identity)
            hosts[choice.key] = hosts.pop(choice.key)  # the newest-updated host last
            row.host, row.host_key, row.host_named = choice.name[:255], choice.key, choice.named
            row.gpu_uuids = list(identity.gpu_uuids)
            row.save(update_fields=["host", "host_key", "host_named", "gpu_uuids"])


class Migration(migrations.Migration):

    dependencies = [
        ("sizing", "0015_fingerprint_host_identity"),
    ]

    operations = [
        migrations.RunPython(assign_host_keys, migrations.RunPython.noop),
    ]
