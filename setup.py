"""The wheel's packages (the rest of the build is in pyproject.toml).

Every package of the apps, found as pyproject's ``packages.find`` finds them (data folders
included), and the project-wide ``templates/`` and ``static/`` at the top of the checkout, shipped
as the packages ``benchforge_templates`` and ``benchforge_static``: a discovery alone cannot map a
folder to another name, and a list kept by hand would silently miss the next new package.
"""

import tomllib

from setuptools import find_namespace_packages, setup

# The project's apps: the root packages its import contracts name.
with open("pyproject.toml", "rb") as _pyproject:
    APPS = tomllib.load(_pyproject)["tool"]["importlinter"]["root_packages"]
TOP = {"benchforge_templates": "templates", "benchforge_static": "static"}


def packages() -> list[str]:
    found = find_namespace_packages(include=[f"{app}*" for app in APPS], exclude=["*.__pycache__"])
    for package, folder in TOP.items():
        found.append(package)
        found += [f"{package}.{sub}" for sub in find_namespace_packages(where=folder)]
    return found


setup(packages=packages(), package_dir=TOP)
