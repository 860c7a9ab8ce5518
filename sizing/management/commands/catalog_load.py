from django.core.management.base import BaseCommand

from sizing.services.estimates import catalog_load


class Command(BaseCommand):
    help = "Load the shipped GPU and model catalogs (idempotent; edited prices are kept)."

    def handle(self, *args: object, **options: object) -> None:
        gpus, models = catalog_load()
        self.stdout.write(f"catalogs loaded: {gpus} GPUs, {models} models")
