"""What the platform allows an endpoint: which key variables and files it may read
(``secrets``) and where its requests may go (``urlpolicy``). Both read only the settings and the
environment, so that the endpoint model, the gateway and the staff pages apply one policy."""
