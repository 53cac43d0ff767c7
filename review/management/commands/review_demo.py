from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from review.demo import review_demo_round


class Command(BaseCommand):
    help = (
        "Create the demo review round: one group rated by two reviewers, one waiting in the "
        "first reviewer's queue. Idempotent."
    )

    def add_arguments(self, parser):
        parser.add_argument("--curator", required=True)
        parser.add_argument("--reviewers", required=True, help="two usernames, comma-separated")

    def handle(self, *args, curator, reviewers, **options):
        User = get_user_model()
        names = [n.strip() for n in reviewers.split(",") if n.strip()]
        users = list(User.objects.filter(username__in=names))
        if len(names) != 2 or len(users) != 2:
            raise CommandError("--reviewers needs two existing usernames, e.g. reviewer,reviewer2")
        users.sort(key=lambda u: names.index(u.username))
        try:
            curator_user = User.objects.get(username=curator)
        except User.DoesNotExist:
            raise CommandError(f"No user {curator!r}.")
        review_round = review_demo_round(curator=curator_user, reviewers=users)
        if review_round is None:
            self.stdout.write("No lineage has an accepted problem yet: no demo review round.")
        else:
            self.stdout.write(f"Demo review round: {review_round.name} (id {review_round.pk}).")
