"""The admin pages: model endpoints, panels, seed imports, users and roles, workers. Django's
own admin stays at /admin/ for raw rows; these pages are how an admin runs the deployment."""
