"""One typed settings object, read from the environment (``CAIRN_*``).

Groups follow the subsystems: ``limits`` (input sizes, request rates), ``embedding`` (model and
batching), ``jwt`` (token keys and checks; the mode itself is ``CAIRN_AUTH``), ``compat``
(switches for RCRT clients).
Nested values use a double underscore: ``CAIRN_LIMITS__MAX_TAGS=32``.
``DATABASE_URL`` and ``NATS_URL`` are also read without the prefix, as operators expect.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

MAX_LIST_PAGE = 50_000


class Limits(BaseModel):
    """Input limits; anything above answers 413/422 and writes nothing."""

    max_context_bytes: int = 256 * 1024
    max_tags: int = 64
    max_tag_length: int = 128
    max_title_length: int = 512
    max_description_length: int = 16 * 1024
    max_body_bytes: int = 1024 * 1024
    # POST /breadcrumbs/batch: records per request, and its own body cap (a thousand
    # ordinary records do not fit in max_body_bytes; each record still meets the limits above).
    max_batch_records: int = Field(default=1000, ge=1)
    max_batch_body_bytes: int = Field(default=16 * 1024 * 1024, ge=1024)
    # GET /breadcrumbs without / with ``limit``; RCRT clients, which never follow
    # X-Next-Cursor, may need more (docs/api.md, "RCRT compatibility"). Bounded: one page is
    # built in memory.
    default_list_limit: int = Field(default=100, ge=1, le=MAX_LIST_PAGE)
    max_list_limit: int = Field(default=1000, ge=1, le=MAX_LIST_PAGE)
    max_search_nn: int = 200
    max_query_tags: int = Field(default=64, ge=1)  # any_tags / all_tags in a query string
    # Per caller (tenant + agent): a token bucket refilled at rate_per_s; 0 turns it off.
    rate_per_s: float = Field(default=0.0, ge=0)
    rate_burst: int = Field(default=50, ge=1)
    max_sse_per_caller: int = Field(default=16, ge=0)  # open SSE connections; 0: no cap
    # The HTTP edge (cairn.api.server): the request line and headers together, and their
    # count, answer 431 above these; a client slower than the timeouts is disconnected.
    max_header_bytes: int = Field(default=64 * 1024, ge=1024)
    max_headers: int = Field(default=100, ge=8)
    header_timeout_s: float = Field(default=10.0, gt=0)  # from connection or first byte
    body_timeout_s: float = Field(default=30.0, gt=0)  # the whole body, from the headers
    max_connections: int = Field(default=0, ge=0)  # beyond it new requests get 503; 0: no cap

    @model_validator(mode="after")
    def _default_within_max(self) -> Limits:
        if self.default_list_limit > self.max_list_limit:
            raise ValueError("default_list_limit may not exceed max_list_limit")
        return self


class JwtSettings(BaseModel):
    """Token keys and claim checks for ``CAIRN_AUTH=jwt``.

    HS256 uses ``secret``; RS256 signs with ``private_key`` and verifies with ``public_key``
    (derived from the private key when only that is given). Each PEM or secret may come from
    the environment or from a file (``*_file``); ``cairn up`` generates one in its data
    directory when none is configured. ``previous_keys`` still verify (key rotation).
    """

    algorithm: Literal["HS256", "RS256"] = "HS256"
    secret: SecretStr | None = None
    secret_file: Path | None = None
    private_key: SecretStr | None = None
    private_key_file: Path | None = None
    public_key: str | None = None
    public_key_file: Path | None = None
    previous_keys: list[str] = Field(default_factory=list)  # secrets or public-key PEMs
    issuer: str | None = None
    audience: str | None = None
    leeway_s: float = Field(default=30.0, ge=0, le=300)
    token_ttl_s: int = Field(default=3600, ge=60)
    max_token_ttl_s: int = Field(default=30 * 24 * 3600, ge=60)


class EmbeddingSettings(BaseModel):
    """The local MiniLM model and how requests are batched onto it."""

    model_dir: Path | None = None  # default: <data_dir>/models
    max_batch: int = 32
    max_wait_ms: float = 2.0
    threads: int = 2
    max_tokens: int = 256
    # A text longer than the window (max_tokens less [CLS] and [SEP]) is also stored as
    # overlapping chunks of chunk_tokens word-pieces, each chunk_overlap into the previous
    # (why 128 and 32: breadcrumbs.chunks).
    chunk_tokens: int = Field(default=128, ge=16, le=510)
    chunk_overlap: int = Field(default=32, ge=0)

    @model_validator(mode="after")
    def _chunks_fit_the_window(self) -> EmbeddingSettings:
        if self.chunk_tokens > self.max_tokens - 2:
            raise ValueError("chunk_tokens may not exceed max_tokens - 2 ([CLS] and [SEP])")
        if self.chunk_overlap >= self.chunk_tokens:
            raise ValueError("chunk_overlap must be smaller than chunk_tokens")
        return self


class ProcessingSettings(BaseModel):
    """Processing state (cairn.processing): the retry job of failed or pending stages, the
    coverage gauges and the worker's own metrics port."""

    # How often the API's retry job looks for due stages, and how many it takes at once.
    retry_interval_s: float = Field(default=30.0, gt=0)
    retry_batch: int = Field(default=64, ge=1, le=10_000)
    # Before retry n (n >= 2) of a stage: backoff * 2**(n-2), capped; after max_attempts
    # failures the stage stays failed until the record is written again.
    retry_backoff_s: float = Field(default=30.0, ge=0)
    retry_max_backoff_s: float = Field(default=3600.0, ge=0)
    retry_max_attempts: int = Field(default=8, ge=1)
    # A claimed stage is another process's again after this long (a crashed attempt).
    retry_lease_s: float = Field(default=300.0, gt=0)
    # How often the API recomputes the coverage gauges (cairn_processing_records...).
    gauge_interval_s: float = Field(default=60.0, gt=0)
    # `cairn worker` serves /metrics on this port (0: none; --metrics-port overrides).
    worker_metrics_port: int = Field(default=0, ge=0, le=65535)


class ReindexSettings(BaseModel):
    """Reindex jobs (``cairn reindex`` and the background job after a schema's hints change)."""

    batch: int = Field(default=64, ge=1, le=1000)  # records per transaction
    # A runner renews its lease on a job while it works; one silent this long is taken over.
    lease_s: float = Field(default=60.0, gt=0)
    poll_interval_s: float = Field(default=5.0, gt=0)  # how often the API looks for jobs
    background: bool = True  # the API runs the jobs that hint changes enqueue
    failures_kept: int = Field(default=20, ge=0)  # failed records listed per job


class PathSettings(BaseModel):
    """Debug resolution paths (cairn.paths): when the worker closes a session's path, and
    the optional LLM summariser of a resolved one (off unless ``summariser_url`` is set)."""

    # Consecutive successes that resolve an active path (a problem resets the count).
    resolution_threshold: int = Field(default=3, ge=1, le=50)
    # An active path with no waypoint for this long is abandoned by the periodic sweep.
    abandon_after_s: float = Field(default=1800.0, gt=0)
    sweep_interval_s: float = Field(default=60.0, gt=0)  # how often the sweep looks
    # Any OpenAI-compatible endpoint (base URL, e.g. http://localhost:11434/v1); unset: the
    # extractive summary only. A failure or timeout leaves the extractive summary standing.
    summariser_url: str | None = None
    summariser_model: str = "gpt-4o-mini"
    summariser_api_key: SecretStr | None = None
    summariser_timeout_s: float = Field(default=20.0, gt=0)


class EventSettings(BaseModel):
    """The JetStream stream, the outbox relay, SSE and webhook delivery."""

    stream_max_age_s: float = 7 * 24 * 3600
    duplicate_window_s: float = 120.0
    relay_batch: int = 500
    relay_poll_s: float = 1.0
    outbox_retention_s: float = 24 * 3600
    sse_ping_interval_s: float = Field(default=15.0, gt=0)
    sse_queue_size: int = 1000
    webhook_timeout_s: float = 5.0  # per attempt, connect to last byte
    webhook_max_attempts: int = 6
    webhook_backoff_s: float = 0.5  # before retry n: backoff * 2**(n-1), jittered, capped
    webhook_max_backoff_s: float = 60.0
    webhook_concurrency: int = 32  # events in flight per process, and requests in flight
    webhook_cache_ttl_s: float = 2.0  # how long an owner's active webhooks are reused
    webhook_ack_wait_s: float = 30.0  # JetStream redelivers an event left unacked this long
    webhook_requeue_poll_s: float = 1.0  # how often DLQ entries asked to retry are looked for
    worker_ack_wait_s: float = 30.0  # JetStream redelivers a worker's event left unacked this long
    # Deliveries of one event to one consumer (worker, webhooks) before it is recorded as a
    # dead letter; waiting out a database outage does not count.
    consumer_max_deliveries: int = Field(default=20, ge=1)
    consumer_outage_max_backoff_s: float = Field(default=10.0, gt=0)  # between outage probes


class ContextSettings(BaseModel):
    """The context builder: budgets, graph reach, and the tokenizer."""

    default_budget: int = 4000
    max_nodes: int = 200
    radius: int = 2
    fanout: int = 16
    # Records beyond the seeds the graph stage loads, nearest first (see context.graph).
    # LoCoMo evidence recall is the same at 120, 200 and 300 at every budget (500-4000
    # tokens); the graph, render and select stages cost in proportion.
    max_candidates: int = 150
    # The worker walks each tenant's graph in memory (context.graph_memory), kept current
    # from the database's change log; off: one recursive query per walk.
    graph_in_memory: bool = True
    # A semantic seed gains this share of its best temporal neighbour's score: a turn
    # inside a relevant exchange matters more than an isolated match (context.support).
    neighbour_support: float = Field(default=0.1, ge=0.0, le=1.0)
    encoding: str = "o200k_base"
    # Agents' `min_similarity` is multiplied by this. RCRT's thresholds (~0.7-0.75) were set
    # on embeddings that averaged padding into the mean, which inflates every cosine;
    # correctly pooled MiniLM scores a clearly relevant document around 0.5-0.6.
    similarity_scale: float = 0.65
    tokenizer_dir: Path | None = None  # default: <data_dir>/tokenizers
    # POST /contexts/query answers kept per API process (context.answers): how many, how
    # long at most, and how long after a tenant's change none is stored (the worker builds
    # a new record's edges after its event). 0 entries or 0 s turns the cache off.
    query_cache_size: int = Field(default=1000, ge=0)
    query_cache_ttl_s: float = Field(default=60.0, ge=0.0)
    query_cache_settle_s: float = Field(default=5.0, ge=0.0)
    # How often the API looks for tenants whose domains changed (context.relabel), and how
    # many records one relabel transaction takes.
    domains_relabel_interval_s: float = Field(default=2.0, gt=0.0)
    domains_relabel_batch: int = Field(default=200, ge=1, le=10_000)
    # Versions of each agent.context.v1 record kept in its history (the newest ones; older
    # versions are deleted with each write); 0 keeps them all. Other schemas keep all.
    history_versions: int = Field(default=20, ge=0)
    # The assembly log (cairn.assemblies): entries older than this are purged, every
    # interval, in batches; 0 days keeps every entry.
    assembly_log_retention_days: float = Field(default=30.0, ge=0.0)
    assembly_log_purge_interval_s: float = Field(default=3600.0, gt=0.0)
    assembly_log_purge_batch: int = Field(default=5000, ge=1, le=100_000)


class TransformSettings(BaseModel):
    """llm_hints rendering: limits on what one record's templates may cost, and caches."""

    render_ms: float = 50.0  # CPU time per record, all of its rules together
    max_output_chars: int = 64 * 1024  # the rendered view of one record
    max_value_chars: int = 1024 * 1024  # any intermediate value inside a template
    max_emitted_chars: int = 1024 * 1024  # text written, macro and block buffers included
    max_steps: int = 1_000_000  # loop iterations, calls, filters, JSONPath nodes
    max_template_chars: int = 32 * 1024
    max_rules: int = 32
    max_render_ids: int = 100  # POST /breadcrumbs/render
    template_cache_size: int = 512
    hints_cache_size: int = 2048
    schema_cache_ttl_s: float = 60.0  # safety net for changes made by other processes


class SecretSettings(BaseModel):
    """Envelope encryption of ``/secrets``: each secret has its own random data key, stored
    wrapped by the key-encryption key (KEK, base64 of 32 bytes). ``cairn up`` generates one
    in its data directory when none is configured. ``previous_keks`` still unwrap during a
    rotation (``cairn secrets rotate-kek`` re-wraps every data key with the current one)."""

    kek: SecretStr | None = None
    kek_file: Path | None = None
    previous_keks: list[SecretStr] = Field(default_factory=list)
    max_value_bytes: int = 64 * 1024


class CompatSettings(BaseModel):
    """Switches for RCRT clients where Cairn deliberately differs (docs/api.md, "RCRT
    compatibility"). The list limits are ``limits.default_list_limit`` and ``max_list_limit``.
    """

    # Default framing of /events/stream; ``?compat=rcrt|cairn`` chooses per connection.
    sse: Literal["cairn", "rcrt"] = "cairn"
    # POST /auth/token without a credential (RCRT's runners mint their tokens that way):
    # only for a trusted single machine, refused off loopback unless forced as well.
    open_minting: bool = False
    open_minting_off_loopback: bool = False


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="CAIRN_",
        env_nested_delimiter="__",
        extra="ignore",
    )

    data_dir: Path = Path(".cairn")
    host: str = "127.0.0.1"
    port: int = 8081
    log_level: str = "INFO"
    log_json: bool = False

    database_url: str | None = Field(
        default=None, validation_alias=AliasChoices("CAIRN_DATABASE_URL", "DATABASE_URL")
    )
    nats_url: str | None = Field(
        default=None, validation_alias=AliasChoices("CAIRN_NATS_URL", "NATS_URL")
    )
    # The owner of the schema (runs migrations, creates the application role) and the role of
    # the few jobs that span tenants (outbox relay, processing retries and gauges, DLQ
    # requeue). Requests and the worker use DATABASE_URL: a role without BYPASSRLS, so
    # row-level security holds.
    admin_database_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("CAIRN_ADMIN_DATABASE_URL", "ADMIN_DATABASE_URL"),
    )
    # Connections kept open per engine (the API's, the worker's). Connections beyond the
    # pool are closed when returned, and a new one costs a backend start, asyncpg's type
    # introspection and every statement prepared again: 20 ingest clients, the webhook
    # consumer and the background loops need ~25 at once, so with 10 kept most writes
    # opened one (benchmarks/results/ingest.md). Connections open only on demand.
    db_pool_size: int = 30
    db_max_overflow: int = 10

    # disabled: every caller is the default tenant with every role (loopback only); jwt: tokens.
    auth: Literal["disabled", "jwt"] = "disabled"
    admin_token: SecretStr | None = None  # may mint tokens for any tenant (POST /auth/token)

    default_tenant_id: str = "00000000-0000-0000-0000-000000000001"
    default_tenant_name: str = "default"
    default_actor: str = "anonymous"
    worker_concurrency: int = 8
    # The JetStream durable consumer the workers share (each event goes to one of them); a
    # worker under another name gets every new event on its own (a separate pool).
    worker_durable: str = Field(default="cairn-worker", pattern=r"^[A-Za-z0-9_-]{1,64}$")
    run_worker: bool = True  # `cairn up` runs one worker beside the server

    limits: Limits = Limits()
    jwt: JwtSettings = JwtSettings()
    embedding: EmbeddingSettings = EmbeddingSettings()
    transforms: TransformSettings = TransformSettings()
    context: ContextSettings = ContextSettings()
    events: EventSettings = EventSettings()
    processing: ProcessingSettings = ProcessingSettings()
    secrets: SecretSettings = SecretSettings()
    compat: CompatSettings = CompatSettings()
    reindex: ReindexSettings = ReindexSettings()
    paths: PathSettings = PathSettings()

    @property
    def model_dir(self) -> Path:
        return self.embedding.model_dir or self.data_dir / "models"

    @property
    def system_database_url(self) -> str | None:
        """Where migrations and the cross-tenant jobs connect (DATABASE_URL when unset)."""
        return self.admin_database_url or self.database_url

    @property
    def public_url(self) -> str:
        return f"http://{self.host}:{self.port}"


@lru_cache
def get_settings() -> Settings:
    return Settings()
