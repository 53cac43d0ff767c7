# The image is built from the package, not from a list of folders: what the wheel carries
# (every app, migration, template, static file, prompt, demo pack and cassette) is what runs.
#
# PYTHON_IMAGE: the official Python image by default. Where no image registry answers, build
# a stand-in from Debian's packages with deploy/images/build.sh and pass
#   --build-arg PYTHON_IMAGE=benchforge-local/python:3.11-slim-bookworm
# (docs/deployment.md, "Without an image registry").
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY . .
RUN pip wheel --no-cache-dir --no-deps -w /wheels . \
    && python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > /wheels/requirements.txt

FROM ${PYTHON_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
# bubblewrap is the default sandbox backend; Debian's /usr/bin/python3 is the interpreter
# inside it (the sandbox worker needs both; the web and model workers carry them unused).
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap python3 \
    && rm -rf /var/lib/apt/lists/*
# The dependencies first, in a layer of their own: a rebuild after a code change reuses it
# while pyproject.toml's dependencies are unchanged.
COPY --from=build /wheels/requirements.txt /wheels/requirements.txt
RUN pip install --no-cache-dir -r /wheels/requirements.txt
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels \
    && useradd --system --uid 1000 --create-home benchforge \
    && mkdir -p /data && chown benchforge /data
ENV BENCHFORGE_DATA_DIR=/data
# Unprivileged: bubblewrap then builds its sandboxes in unprivileged user namespaces.
USER benchforge
WORKDIR /home/benchforge
EXPOSE 8000
CMD ["gunicorn", "benchapp.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--timeout", "60"]
