from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """The bottom of the house: the role vocabulary (``roles``: group names, the view
    decorators) and the user and role grants (``services``). It imports only Django, so every
    app's views may read it."""

    name = "accounts"
    verbose_name = "Accounts"
