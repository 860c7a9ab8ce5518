from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from sizing.services.estimates import demo_setup


class Command(BaseCommand):
    help = "Create (or reset) the demo organisation and user, and print the login."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--password", help="use this password instead of a random one")

    def handle(self, *args: object, **options: object) -> None:
        username, password = demo_setup(
            organisation_name=settings.SIZING_DEMO_ORGANISATION, password=options.get("password") or None
        )
        self.stdout.write(self.style.SUCCESS(f"demo login: user {username!r}  password {password!r}"))
