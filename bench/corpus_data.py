"""Word lists and templates for bench/corpus.py: the world the generated memories talk about.

Lists used for filler prose are ordered from frequent to rare: corpus.py samples them
with Zipf weights, so a few words ("release", "test") are everywhere and most are rare.
Templates hold slots, {slot} or {slot:form}, that corpus.py fills. Every name here (projects,
people, vendors, places) is invented for the benchmark's made-up memories and refers to no one.
"""

from typing import NamedTuple

PROJECTS = "heron koda atlas pylon quill ember juniper nimbus orbit tango willow cobalt".split()
TEAMS = "platform infra payments growth mobile data security support design research".split()
PEOPLE = """Mara Okafor, Tomasz Nowak, Priya Raman, Jonas Berg, Aiko Tanaka, Luis Ortega, Fatima Haddad,
Sven Lindqvist, Chloe Martin, Dmitri Volkov, Amara Nwosu, Kenji Sato, Ines Duarte, Oskar Nilsson, Leila Karimi,
Mateo Rossi, Hannah Weber, Ravi Menon, Noor Aziz, Eliza Grant, Pavel Horak, Yara Costa, Felix Braun, Zoe Adams,
Kofi Mensah, Ana Petrovic, Ben Carter, Sara Lind, Omar Farouk, Julia Meyer, Tariq Hussain, Mei Lin, Nikos Pappas,
Clara Fischer, Diego Alvarez, Greta Holm""".replace("\n", " ").split(", ")
ROLES = ["backend engineer", "product manager", "designer", "SRE", "data engineer", "engineering manager",
         "mobile developer", "security engineer", "support lead", "founder", "contractor", "QA engineer"]
COMPONENTS = """billing service, search indexer, invoice exporter, webhook relay, auth gateway, image resizer,
email digest, rate limiter, job scheduler, audit log, report generator, sync worker, notification fanout,
payment reconciler, csv importer, thumbnail cache, session store, metrics exporter, backup job, admin console,
mobile api, onboarding wizard, pricing page, signup funnel, search ranking, recommendation model, fraud scorer,
ledger service, warehouse loader, cdn purge job, pdf renderer, translation pipeline, chat widget, calendar sync,
contact importer, tile server, geocoder, ocr worker, speech transcriber, embedding service, vector index,
changelog bot, status page, support inbox, crash reporter, license checker""".replace("\n", " ").split(", ")
TOOLS = """Grafana Prometheus Postgres Redis Sentry Kafka Terraform Docker Kubernetes nginx SQLite Caddy Tailscale
Ansible Loki Temporal Celery ClickHouse DuckDB Traefik WireGuard Honeycomb PagerDuty Opsgenie Valkey Memcached
NATS RabbitMQ OpenTofu Pulumi Nomad Podman Envoy HAProxy Consul Minio Restic Borg rclone Litestream pgbouncer
Debezium Airflow Dagster dbt Metabase Superset Playwright Cypress Vitest esbuild Vite Bun Deno FastAPI Django
Flask Phoenix Axum Tokio OpenSearch Meilisearch Typesense Tantivy Qdrant pgvector Ollama vLLM Sidekiq k3s
Tempo Datadog""".split()
PROVIDERS = [("Hetzner", "Falkenstein"), ("Hetzner", "Helsinki"), ("OVH", "Gravelines"), ("AWS", "eu-central-1"),
             ("AWS", "us-east-2"), ("Fly.io", "Amsterdam"), ("DigitalOcean", "fra1"), ("Scaleway", "Paris"),
             ("GCP", "europe-west4"), ("Linode", "Frankfurt"), ("Vultr", "Stockholm"), ("Exoscale", "Vienna")]
LIBS = """sqlalchemy pydantic numpy react openssl libvips protobuf boto3 urllib3 webpack django-storages
psycopg grpcio pillow lxml tokio serde prisma axios moment""".split()
REASONS = ["the newer release leaks memory under load", "it broke the CSV export for older browsers",
           "the licence changed in the last major version", "the team already knows it well",
           "it halves the hosting bill", "the maintainers went quiet last year",
           "it supports streaming replication out of the box", "the upgrade needs a full reindex",
           "the vendor SDK only supports the old API", "its cold start is under a second",
           "the audit flagged the alternative", "it runs on a single small VM"]
CHANGES = "cache shard batch tune compress precompute denormalize parallelize profile".split()
CAUSES = ["an expired TLS certificate on the load balancer", "a full disk on the log volume",
          "a runaway cron job that forked every minute", "a typo in the DNS record at the registrar",
          "clock skew between the two database nodes", "a missing index after the schema migration",
          "an unbounded retry loop in the client library", "a leaked file descriptor in the upload path",
          "the connection pool capped at ten", "a stale feature flag cache", "a kernel upgrade that changed TCP defaults",
          "a webhook storm from the payment provider", "an OOM kill during the nightly vacuum"]
MILESTONES = ["beta launch", "public launch", "security review", "pricing change", "data migration",
              "app store submission", "load test", "accessibility audit", "partner demo", "board update"]
VENDORS = ["Northwind Logistics", "Brightpath Analytics", "Kestrel Payments", "Ironbark Hosting", "Lumen Print",
           "Bluefin Telecom", "Cedar Legal", "Marlow Insurance", "Quayside Design", "Tidewater Security",
           "Silverline Cloud", "Pinecrest Recruiting", "Harrow Translations", "Foxglove Studios"]
HOSTS = """gannet osprey petrel kittiwake shearwater fulmar skua tern plover dunlin curlew godwit whimbrel
dotterel sanderling turnstone avocet lapwing redshank greenshank""".split()
CITIES = """Lisbon Porto Tallinn Riga Vilnius Krakow Gdansk Ljubljana Zagreb Valencia Bilbao Lyon Bordeaux Ghent
Utrecht Aarhus Malmo Bergen Tromso Tampere Graz Salzburg Brno Leipzig Freiburg Bologna Trieste Thessaloniki
Plovdiv Cluj Nairobi Accra Montevideo Oaxaca Kyoto Sapporo Busan Tbilisi""".split()
PREFERENCES = [("prefers written proposals to meetings", "does {first} like meetings or written proposals?"),
               ("wants code reviews before eleven, never in the afternoon", "when does {first} want reviews done?"),
               ("hates being paged for warnings that can wait", "what annoys {first} about getting paged?"),
               ("drinks only green tea and refuses coffee", "what does {first} drink?"),
               ("likes the short summary first and the details after", "how should updates for {first} be structured?"),
               ("expects a diagram in every design review", "what does {first} expect at design reviews?"),
               ("takes every other Friday off", "which days is {first} usually off?"),
               ("is vegetarian, so book restaurants with options", "any dietary restrictions for {first}?"),
               ("answers messages in batches twice a day", "how quickly does {first} reply to messages?"),
               ("keeps a paper notebook for every project", "does {first} take notes on paper?")]
ANIMALS = "dog cat parrot tortoise rabbit greyhound ferret".split()
PETS = "Biscuit Pixel Mochi Turnip Ziggy Pancake Pepper Waffle Gizmo Noodle Clementine Bartleby".split()
LANGUAGES = "Portuguese Polish Tamil Swedish Japanese Spanish Arabic Russian Yoruba Greek Czech Farsi".split()
CHANNELS = ["Signal", "a Slack DM", "the ops channel", "email", "Matrix", "a comment on the ticket"]
BAKERIES = ["Crumb & Co", "the bakery on Elm Street", "Boulangerie Marcel", "Sweet Orbit", "Pastelaria Nata"]
BOOKS = [("Designing Data-Intensive Applications", "Martin Kleppmann",
          "replication lag is a product decision, not only an ops one"),
         ("The Phoenix Project", "Gene Kim", "unplanned work is the real enemy of throughput"),
         ("Thinking in Systems", "Donella Meadows", "the leverage points are the rules and goals, not the parameters"),
         ("A Philosophy of Software Design", "John Ousterhout", "deep modules with small interfaces beat shallow ones"),
         ("The Mythical Man-Month", "Fred Brooks", "adding people to a late project makes it later"),
         ("Accelerate", "Nicole Forsgren", "deploy frequency and lead time predict performance"),
         ("Team Topologies", "Matthew Skelton", "team cognitive load should shape service boundaries"),
         ("Working in Public", "Nadia Eghbal", "maintainers' attention is the scarce resource"),
         ("The Goal", "Eliyahu Goldratt", "optimise the bottleneck and ignore the rest"),
         ("Shape Up", "Ryan Singer", "fixed time with variable scope keeps projects honest"),
         ("Release It!", "Michael Nygard", "every integration point needs a timeout and a circuit breaker"),
         ("The Manager's Path", "Camille Fournier", "a new manager should first learn what the team already does well")]
APPLIANCES = ["dishwasher", "boiler", "laptop", "e-bike", "espresso machine", "wifi router", "washing machine",
              "standing desk", "monitor", "heat pump"]
SHOPS = ["MediaWorld", "the outlet in the harbour", "a refurbisher online", "Kjell & Company", "the Saturday market"]
AIRPORTS = ["LIS", "AMS", "CPH", "VIE", "ARN", "BER", "ZRH", "HEL", "DUB", "PRG"]
LESSONS = [("never run schema migrations in the Friday deploy window",
            "what did we learn about running migrations on Fridays?", "Friday migrations"),
           ("a backup is only real once a restore has been rehearsed", "what's the lesson about backups and restores?",
            "rehearsed restore"),
           ("put a timeout on every outbound HTTP call, including health checks",
            "what did we learn about timeouts on outbound calls?", "timeout health checks"),
           ("rotate credentials before the contractor offboarding, not after",
            "when should credentials be rotated for departing contractors?", "contractor offboarding"),
           ("write the rollback steps before starting a data migration", "what should happen before a data migration?",
            "rollback steps"),
           ("load tests must use production-sized data or they lie", "why did the load test mislead us?",
            "production-sized data"),
           ("alerts without a runbook link get ignored within a week", "why do people ignore some alerts?",
            "runbook link"),
           ("pin the base image digest, not only the tag", "what went wrong with docker image tags?", "image digest"),
           ("time zones belong in the data, never in the display code", "what did we learn about timezone handling?",
            "time zones display"),
           ("a retry without jitter turns a blip into an outage", "what's the lesson on retries?", "jitter"),
           ("ask support before changing anything customers see in emails",
            "who should we check with before changing customer emails?", "customer emails"),
           ("cap every queue, an unbounded one only moves the outage", "why should queues be bounded?",
            "unbounded queue")]
MONTHS = "January February March April May June July August September October November December".split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday".split()

NOUNS = """release test deploy build issue change user data service config error log query server endpoint
ticket review branch commit feature bug fix script job cache database schema migration metric alert dashboard
incident report plan meeting doc note draft version patch library dependency client request response timeout retry
queue worker batch token session account permission budget invoice customer contract estimate deadline sprint
backlog roadmap spec proposal design prototype benchmark trace sample threshold quota capacity region cluster node
replica shard index backup snapshot rollout canary rollback flag pipeline runner artifact image container volume
firewall certificate domain proxy gateway webhook payload field column table row file folder template screen
button form email notification reminder calendar agenda summary handover checklist runbook postmortem
changelog diff lockfile fixture mock stub heuristic regression latency throughput workaround""".split()
VERBS = """check update fix test deploy review merge add remove move rename split host migrate ship revert copy
upload download cache retry schedule cancel approve reject draft publish archive restore rotate renew upgrade
downgrade pin bump patch profile measure tune scale index reindex backfill import export sync parse validate render
alert page monitor debug trace reproduce investigate document summarize estimate plan prioritize assign escalate
close reopen label tag compare benchmark refactor simplify install configure enable disable throttle block""".split()
ADJECTIVES = """new old slow fast flaky stable noisy broken stale small large critical minor urgent manual nightly
weekly shared internal external legacy current temporary expensive cheap risky safe clean messy partial empty
brittle verbose duplicated orphaned misconfigured undocumented""".split()
ORDINALS = "second third fourth fifth".split()
PERIODS = "week month sprint quarter".split()

# A few memories are written in Chinese or Japanese, as an agent working for such a user would.
ZH_NAMES = ["张伟", "李娜", "王芳", "刘洋", "陈静", "赵磊"]
ZH_CITIES = ["杭州", "成都", "深圳", "南京", "西安", "青岛"]
JA_NAMES = ["佐藤", "鈴木", "高橋", "田中", "渡辺", "伊藤"]
JA_CITIES = ["札幌", "福岡", "京都", "横浜", "仙台", "金沢"]
JA_HOBBIES = ["登山", "将棋", "写真", "料理", "釣り", "陶芸"]
ZH_FILLER = ["今天和团队讨论了{project} 的进度，大家觉得测试还不够。", "下周需要再检查一次日志和监控。",
             "部署之前要先确认数据库备份。", "用户反馈说页面加载有点慢。", "会议记录已经发到群里了。",
             "这个问题暂时没有找到原因，先记下来。", "预算需要重新评估。", "客户希望下个月能看到新版本。",
             "{project} 的接口文档还没有更新。", "有几个测试在夜里失败了，需要重新跑一遍。",
             "新同事下周开始参与{project} 的开发。", "缓存的命中率比上周低了一些。", "代码评审的时间太长，需要改进流程。",
             "服务器的磁盘空间快满了，要清理旧日志。", "这周的工作重点是修复已知的问题。"]
JA_FILLER = ["今日は{project} のリリース準備について話しました。", "テストがまだ足りないので来週も続けます。",
             "ログを確認しましたが、特に問題はありませんでした。", "次の会議までに資料をまとめておきます。",
             "お客様からの問い合わせが少し増えています。", "デプロイの手順を見直す必要があります。",
             "{project} の画面デザインについて意見をもらいました。", "夜間のバッチ処理が遅くなっています。",
             "新しいメンバーが来週から参加します。", "キャッシュの設定をもう一度確認します。", "予算の見直しが必要かもしれません。",
             "コードレビューに時間がかかりすぎています。", "サーバーのディスク容量が残り少ないです。"]

# Filler templates: {slot} or {slot:form} is filled per occurrence from the Zipf-weighted lists.
PROSE = ["The {adj} {noun} on {project} {verb:ed} again after the {noun} change.",
         "{first} {verb:ed} the {component} twice this {period} and the {noun} still {verb:s}.",
         "We spent most of {weekday} {verb:ing} {noun:s} in the {component}.",
         "Nobody is sure whether the {noun} or the {noun} is to blame.",
         "I {verb:ed} {num} {noun:s} and left a note in the {noun} for {first}.",
         "The {noun} looks {adj}, but {first} wants to {verb} it before the {milestone}.",
         "It was {adj} to {verb} the {noun:s} by hand, so we wrote a small script.",
         "{tool} kept {verb:ing} the {noun:s}; switching it off made the {noun} {adj} again.",
         "Next step: {verb} the {adj} {noun:s} and {verb} the {noun}.",
         "The {noun:s} from last {period} are still {adj}.",
         "We agreed to {verb} the {noun} only after {first} {verb:s} the {noun}.",
         "Most of the {noun:s} came from the {component}, a few from {tool}.",
         "There is a {adj} {noun} in the {noun} that nobody has {verb:ed} yet.",
         "{first} asked whether we could {verb} the {noun} without {verb:ing} the {component}.",
         "This is the {ordinal} time the {noun} has {verb:ed} this {period}.",
         "If the {noun} {verb:s} again, page {first} rather than {verb:ing} it.",
         "A {adj} {noun} would save us {num} minutes a {period}.",
         "The {noun} count went up to {num} after the {noun} change on {host}.",
         "Keep an eye on the {component} {noun:s} during the {milestone}.",
         "I left the {adj} {noun:s} alone; they are not worth {verb:ing} right now.",
         "{project} still depends on {tool} for the {noun}, which makes {verb:ing} it {adj}.",
         "The {noun} for the {component} is {adj} and {adj}, as usual.",
         "{first} is travelling to {city} next {period}, so expect slow replies on the {noun:s}.",
         "We looked at {tool} for the {noun} but it felt {adj} for a team our size.",
         "Two {noun:s} failed on {host} overnight; {verb:ing} them again fixed both.",
         "The {milestone} depends on the {component} more than anyone admits.",
         "Honestly the {noun} is fine; the {adj} part is the {noun} around it.",
         "{first} and {first} disagree on whether to {verb} or {verb} the {noun:s} first.",
         "I would rather {verb} the {component} once than {verb} it every {period}.",
         "The numbers: {num} {noun:s}, {num} {noun:s}, and one {adj} {noun} nobody owns.",
         "We should write down how to {verb} the {noun}; only {first} knows today.",
         "Still waiting on {first} for the {noun}, then the {component} can be {verb:ed}.",
         "The {adj} {noun:s} are a symptom; the cause is probably in the {component}.",
         "Last {period} the {component} {verb:ed} {num} {noun:s} without anyone noticing.",
         "Moving the {noun} to {tool} is tempting but would delay the {milestone}."]
USER = ["can you {verb} the {noun} in the {component}?", "why is the {noun} so {adj} today?",
        "ok, {verb} it and tell me when the {noun:s} look {adj}.", "did {first} {verb} the {noun} already?",
        "let's not {verb} the {component} before the {milestone}.", "what happened to the {noun:s} on {host}?",
        "remind me to {verb} the {noun} on {weekday}.", "is {tool} still {verb:ing} the {noun:s}?",
        "what did {first} say about the {component}?", "can we {verb} the {noun:s} without {tool}?",
        "please don't {verb} anything on {host} today.", "how many {noun:s} are still {adj}?",
        "draft a note to {first} about the {noun}.", "compare {tool} and {tool} for the {noun}."]
AGENT = ["I {verb:ed} the {noun} and found {num} {adj} {noun:s}.",
         "the {component} {verb:s} the {noun} on every {noun}; that is why it is {adj}.",
         "done: {num} {noun:s} {verb:ed}, {num} left for {first}.",
         "{tool} reports {num} {noun:s} in the last {period}, mostly {adj} ones.",
         "I could {verb} the {noun} now or wait for {first}; waiting is safer.",
         "the {noun} on {host} is {adj}; I {verb:ed} it and {verb:ed} the {noun}.",
         "{first} {verb:ed} the {noun} yesterday, so I only {verb:ed} the {component}.",
         "there are {num} {adj} {noun:s}; the oldest is from last {period}.",
         "I can't {verb} the {noun} on {host} without access; asking {first}.",
         "the {component} is {verb:ing} {noun:s} again, same as last {period}.",
         "I drafted the note to {first}; it says the {noun} is {adj} and needs a {noun}.",
         "{tool} and the {component} disagree on the {noun}; I trust {tool} less."]
BULLETS = ["{first} will {verb} the {adj} {noun:s}.", "{verb:ing} the {noun} is {adj} until the {milestone}.",
           "{tool} vs {tool}: the {noun} is {adj} either way.", "open question: who {verb:s} the {component}?",
           "the {noun} {verb:ed} {num} times last {period}.", "{project} {noun:s} still {adj}.",
           "{first} prefers to {verb} the {noun} first.", "{tool} for the {noun:s}: {adj}, but {adj}.",
           "keep the {component} as it is until the {milestone}.", "{num} {noun:s} to {verb} before {weekday}.",
           "the {adj} {noun} on {host} needs an owner.", "ask {first} whether the {noun} can wait."]
PERSONAL = ["Book the table at the place near the station for {weekday}.", "{first} recommended a good bakery in {city}.",
            "Pack the charger, the passport and the blue notebook.", "Pay the electricity bill before the {num}th.",
            "Call the landlord about the radiator again.", "The gym is closed on {weekday} this {period}.",
            "Renew the library card; it expires next {period}.", "{first} will water the plants while I am away.",
            "Dentist moved to {weekday} morning.", "Check the train times back from {city} on {weekday}.",
            "Still need a present for {first}; something small.", "The neighbours' wifi name changed again."]
TASKS = ["{verb:cap} the {adj} {noun} for {project}", "{verb:cap} {num} {noun:s} in the {component}",
         "Ask {first} about the {noun}", "{verb:cap} the {noun} on {host}", "{verb:cap} the {tool} {noun}",
         "Follow up on the {milestone} {noun}"]


# -- facts: how a memory states one, how a question asks about it ---------------------------

class Kind(NamedTuple):
    scope: str  # which memories may state it
    key: tuple[str, ...]  # the slots no two memories share for this kind (the last names the topic)
    says: tuple[str, ...]
    asks: tuple[str, ...]
    exact: str


KINDS: dict[str, Kind] = {
    "port": Kind("project", ("project", "component"),
                 ("We moved the {project} {component} to port {port} so it stops colliding with {tool}.",
                  "Note to self: the {component} in {project} listens on port {port} now, not the default."),
                 ("which port does the {project} {component:q} listen on now?",
                  "what port number did we give {project}'s {component:q}?", "{project} {component:q} port",
                  "is the {component:q} on {project} still on the default port?"),
                 "what runs on port {port}?"),
    "host": Kind("project", ("project", "component"),
                 ("The {project} {component} is hosted on {provider} ({region}) since the last migration.",
                  "We ended up hosting the {component} for {project} at {provider}, region {region}."),
                 ("where do we host the {component:q} for {project}?", "which provider hosts {project}'s {component:q}?",
                  "what region is the {project} {component:q} running in?"),
                 "what did we put on {provider} {region}?"),
    "pin": Kind("project", ("project", "lib"),
                ("{lib} stays pinned at {version} in {project} because {reason}.",
                 "Pinning {lib} to {version} for {project}: {reason}."),
                ("why can't {project} upgrade {lib}?", "which {lib} version are we stuck on in {project}?",
                 "what's the reason for the {lib} pin on {project}?"),
                "{lib} {version}"),
    "speedup": Kind("project", ("project", "component"),
                    ("After {change:ing} the {component}, p95 latency on {project} dropped from {before} ms to {after} ms.",
                     "{change:ing} the {project} {component} took p95 from {before} ms down to {after} ms."),
                    ("how much faster did the {project} {component:q} get once we {change:ed} it?",
                     "did {change:ing} help the {component:q} latency in {project}?",
                     "what was the p95 of {project}'s {component:q} before we {change:ed} it?"),
                    "latency from {before} ms to {after} ms"),
    "outage": Kind("project", ("project", "component"),
                   ("Root cause of the {date} {component} outage on {project}: {cause}.",
                    "The {project} {component} went down on {date}; it turned out to be {cause}."),
                   ("what caused the {project} {component:q} outage?", "why did the {component:q} go down on {project}?",
                    "root cause of {project}'s {component:q} failure"),
                   "when did we have {cause}?"),
    "owner": Kind("project", ("project", "component"),
                  ("{person} owns the {component} for {project} from now on.",
                   "Ownership of the {project} {component} moved to {person}."),
                  ("who is responsible for the {project} {component:q}?", "who should I ask about {project}'s {component:q}?",
                   "who's the owner of the {component:q} on {project}?"),
                  "does {person} own the {project} {component}?"),
    "deadline": Kind("project", ("project", "milestone"),
                     ("The {project} {milestone} is due on {date}, {first} confirmed.",
                      "Hard deadline for the {milestone} on {project}: {date}."),
                     ("when is the {milestone:q} for {project} due?", "what's the deadline for {project}'s {milestone:q}?",
                      "when do we need the {project} {milestone:q} done by?"),
                     "what is due on {date}?"),
    "choice": Kind("project", ("project", "component"),
                   ("For the {project} {component} we chose {tool} over {tool2}: {reason}.",
                    "{tool} won over {tool2} for the {component} on {project}, mainly because {reason}."),
                   ("which tool did we pick for the {project} {component:q}?",
                    "why didn't we go with {tool2} for {project}'s {component:q}?",
                    "what did {project} choose for the {component:q}, and why?"),
                   "{tool} versus {tool2}"),
    "flag": Kind("project", ("project", "component"),
                 ("The new {component} on {project} is behind the flag `{flag}`; it stays off for customers until {date}.",),
                 ("what's the feature flag for the new {project} {component:q}?",
                  "how do I turn on the new {component:q} in {project}?"),
                 "{flag}"),
    "staging": Kind("project", ("project",),
                    ("The {project} staging box is {host}; ssh in as deploy.", "Staging for {project} runs on {host}."),
                    ("what's the hostname of {project}'s staging server?", "which machine is {project} staging on?"),
                    "what is {host}?"),
    "quote": Kind("vendor", ("vendor", "component"),
                  ("{vendor} quoted {amount} {currency} a month to run the {component}.",),
                  ("how much did {vendor} want for the {component:q}?",
                   "what was {vendor}'s price for running our {component:q}?", "{vendor} quote {component:q} monthly cost"),
                  "who quoted {amount} {currency}?"),
    "city": Kind("person", ("person",),
                 ("{first} lives in {city} and is usually online from {hour}:00 local time.", "{person} is based in {city}."),
                 ("where does {first} live?", "which city is {person} based in these days?"),
                 "who lives in {city}?"),
    "preference": Kind("person", ("person",), ("{first} {pref}.",), ("{pref_q}",), "{first} {pref}"),
    "pet": Kind("person", ("person",),
                ("{first} has a {animal} called {pet}; it shows up on most video calls.",),
                ("what's the name of {first}'s {animal:q}?", "does {first} have any pets?"),
                "who owns {pet}?"),
    "languages": Kind("person", ("person",),
                      ("{first} speaks {lang} natively and some {lang2}.",),
                      ("which languages does {first} speak?", "can {first} speak {lang2}?"),
                      "{lang} and {lang2} speaker"),
    "team": Kind("person", ("person",),
                 ("{person} moved from {team} to the {team2} team in {month}.",),
                 ("when did {first} switch to {team2}?", "which team was {first} on before {team2}?"),
                 "{team} to {team2} in {month}"),
    "birthday": Kind("person", ("person",),
                     ("{first}'s birthday is {date}; the team usually gets a cake from {bakery}.",),
                     ("when is {first}'s birthday?", "where do we order {first}'s birthday cake?"),
                     "cake from {bakery}"),
    "contact": Kind("person", ("person",),
                    ("Best way to reach {first} is {channel}; no calls before {hour}:00.",),
                    ("how do I contact {first}?", "can I call {first} early in the morning?"),
                    "{channel} {first}"),
    "flight": Kind("personal", ("city",),
                   ("Flight {flight} to {city} leaves {date} at {clock} from {airport}, seat {seat}.",),
                   ("when does my flight to {city} depart?", "what seat did I get on the {city} flight?",
                    "which airport do I fly to {city} from?"),
                   "flight {flight}"),
    "book": Kind("personal", ("book",),
                 ("Main takeaway from {book} by {author}: {idea}.",),
                 ("what did I take away from {book}?", "who wrote {book}?", "notes on the {author_last} book"),
                 "{author}"),
    "warranty": Kind("personal", ("appliance",),
                     ("The {appliance} is under warranty until {date}; serial {serial}, bought at {shop}.",),
                     ("until when is the {appliance:q} covered by warranty?", "where did we buy the {appliance:q}?",
                      "what's the {appliance} serial number?"),
                     "serial {serial}"),
    "lesson": Kind("lesson", ("lesson",), ("Lesson learned: {lesson}.",), ("{lesson_q}",), "{lesson_e}"),
    "zh_release": Kind("zh", ("project",), ("{project} 项目的发布日期定在{mon}月{day}日，由{zh_name}负责。",),
                       ("{project} 项目什么时候发布？", "谁负责 {project} 的发布？"), "{zh_name}负责什么？"),
    "zh_server": Kind("zh", ("project",), ("{project} 的数据库服务器放在{zh_city}机房，每天凌晨三点备份。",),
                      ("{project} 的数据库服务器在哪里？", "{project} 数据库什么时候备份？"), "{zh_city}机房"),
    "ja_home": Kind("ja", ("ja_name",), ("{ja_name}さんは{ja_city}に住んでいて、趣味は{ja_hobby}です。",),
                    ("{ja_name}さんはどこに住んでいますか？", "{ja_name}さんの趣味は何ですか？"), "{ja_city}に住んでいる人"),
    "ja_deadline": Kind("ja", ("project",), ("{project} の締め切りは{mon}月{day}日に決まりました。",),
                        ("{project} の締め切りはいつですか？",), "{mon}月{day}日の締め切り"),
}
