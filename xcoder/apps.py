from django.apps import AppConfig


class XcoderConfig(AppConfig):
    name = "xcoder"
    verbose_name = "X-Coder synthesis campaigns"
