# `ecomrlve serve` in a container, offline: the embedded default catalog and embedder, nothing downloaded at run time.
#
#   docker build -t ecomrlve .
#   docker run -p 8000:8000 -e ECOMRLVE_TOKEN=... -e ECOMRLVE_SECRET=... ecomrlve
#
# The server binds 0.0.0.0 inside the container, so it refuses to start without a token ($ECOMRLVE_TOKEN; clients
# send `Authorization: Bearer TOKEN`). Set $ECOMRLVE_SECRET for records that replay across restarts. Options of
# `ecomrlve serve` go after the image name: `docker run ... ecomrlve ecomrlve serve --collection C1 --host 0.0.0.0`.
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 NUMBA_CACHE_DIR=/tmp/numba-cache

WORKDIR /opt/ecomrlve
COPY pyproject.toml README.md LICENSE ./
COPY src ./src
RUN pip install ".[serve]" && useradd --create-home --uid 10001 ecomrlve

USER ecomrlve
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=4)"]
CMD ["ecomrlve", "serve", "--host", "0.0.0.0", "--port", "8000"]
