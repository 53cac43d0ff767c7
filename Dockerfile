# The image is built from the package, not from a list of folders: what the wheel carries
# (every app, migration, template, static file, prompt, demo pack and cassette) is what runs.
FROM python:3.11-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN pip wheel --no-cache-dir --no-deps -w /wheels .

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
# bubblewrap is the default sandbox backend; Debian's /usr/bin/python3 is the interpreter
# inside it (the sandbox worker needs both; the web and model workers carry them unused).
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap python3 \
    && rm -rf /var/lib/apt/lists/*
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
