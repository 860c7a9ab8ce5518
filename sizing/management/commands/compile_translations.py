from pathlib import Path

import polib
from django.conf import settings
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Compile locale/*/LC_MESSAGES/*.po into .mo files (pure Python: no gettext install needed)."

    def handle(self, *args: object, **options: object) -> None:
        for locale_dir in settings.LOCALE_PATHS:
            for po_path in sorted(Path(locale_dir).glob("*/LC_MESSAGES/*.po")):
                po = polib.pofile(str(po_path))
                po.save_as_mofile(str(po_path.with_suffix(".mo")))
                if int(options.get("verbosity", 1)) > 0:
                    self.stdout.write(f"compiled {po_path} ({po.percent_translated()}% translated)")
