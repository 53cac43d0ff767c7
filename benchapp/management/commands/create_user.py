import secrets

from django.core.management.base import BaseCommand, CommandError

from accounts.roles import ROLES
from accounts.services import user_create


class Command(BaseCommand):
    help = "Create a user with a role (admin, curator, reviewer). Prints the password if generated."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", required=True, choices=ROLES)
        parser.add_argument("--password", help="default: a random one, printed")
        parser.add_argument("--email", default="")

    def handle(self, *args, username, role, password, email, **options):
        generated = password is None
        password = password or secrets.token_urlsafe(9)
        try:
            user_create(username=username, password=password, role=role, email=email)
        except ValueError as exc:
            raise CommandError(str(exc))
        shown = f" password: {password}" if generated else ""
        self.stdout.write(self.style.SUCCESS(f"{role} {username} ready.{shown}"))
