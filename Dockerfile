FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
# bubblewrap is the default sandbox backend; /usr/bin/python3 is the interpreter inside it.
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap python3 \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY benchapp benchapp
COPY evolution evolution
COPY review review
COPY templates templates
COPY static static
COPY manage.py ./
RUN pip install --no-cache-dir . && useradd --system --uid 1000 benchforge \
    && mkdir -p /data && chown benchforge /data
ENV BENCHFORGE_DATA_DIR=/data
USER benchforge
EXPOSE 8000
CMD ["gunicorn", "benchapp.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--timeout", "60"]
