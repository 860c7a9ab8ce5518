"""Re-encrypt the stored endpoint API keys with the current SIZING_SECRETS_KEY (see benchmarks_app/kernel/endpoint_secrets)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from benchmarks_app.services.endpoints import endpoint_keys_rotate


class Command(BaseCommand):
    help = (
        "Re-encrypt every stored endpoint API key with the current SIZING_SECRETS_KEY (keep the old material in "
        "SIZING_SECRETS_KEY_FALLBACKS until this has run). The keys are never printed."
    )

    def handle(self, *args: object, **options: object) -> None:
        rotated, unreadable = endpoint_keys_rotate()
        self.stdout.write(f"{rotated} API key(s) re-encrypted with the current key material")
        if unreadable:
            raise CommandError(
                f"{len(unreadable)} key(s) could not be decrypted with any configured material "
                f"(endpoints {', '.join(map(str, unreadable))}): enter them again"
            )
