# agentwire in a container. Build: docker build -t agentwire .
# Run:   openssl rand -hex 24 > token && chmod 600 token
#        docker run -p 2468:2468 -v "$PWD/token:/run/secrets/agentwire-token:ro" \
#          -e AGENTWIRE_TOKEN_FILE=/run/secrets/agentwire-token agentwire
# Without a token of yours the daemon makes one in its data dir and prints the inspector URL with
# it (read it later with: docker exec <container> node /app/bin/agentwire.js token); the container
# binds 0.0.0.0, so never AGENTWIRE_NO_TOKEN=1 unless the network around it is private. The daemon
# runs as root and its agents as the user agentwire (docs/security.md). See docs/deploy.md.
FROM node:24-bookworm-slim AS build
# The event store uses Node 24's own node:sqlite; npm ci still builds the optional better-sqlite3
# (Node 20's store), which compiles from source where no prebuilt binary can be fetched.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# The npm workspace (client/) must be there for npm ci to install the tree the lock file describes,
# and agentwire's postinstall (the SQLite check, scripts/check-sqlite.js) for npm ci to run it.
COPY client/package.json ./client/
COPY scripts/check-sqlite.js ./scripts/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts/bundle.js scripts/build-web.js ./scripts/
# The inspector (served at /ui/) is built from its sources and the client's (docs/inspector.md).
COPY inspector ./inspector
COPY client/src ./client/src
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
# tini as PID 1 forwards signals and reaps orphaned grandchildren of agents, which node as PID 1
# would leave as zombies.
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production \
    AGENTWIRE_HOST=0.0.0.0 \
    AGENTWIRE_PORT=2468
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json openapi.json ./
COPY bin ./bin
# Agent CLIs, installed at build time with the daemon's own command:
#   docker build --build-arg AGENTS="claude codex" -t agentwire .   (or AGENTS=all; ~1.2 GB)
ARG AGENTS=""
ENV AGENTWIRE_AGENTS_DIR=/opt/agentwire/agents
RUN mkdir -p "$AGENTWIRE_AGENTS_DIR" && \
    for agent in $AGENTS; do node /app/bin/agentwire.js install-agent "$agent" || exit 1; done && \
    rm -rf /root/.npm
# The daemon runs as root so that it can start its agents as the unprivileged user agentwire
# (--agent-user): they cannot read the daemon's environment or memory (/proc/<pid>/environ, ...), its
# token file, or anything under /root (0700: the daemon's HOME and its data); they can use
# /workspace (the default session cwd) and /home/agentwire (their HOME: config, credentials,
# caches), and run the agent CLIs in /opt/agentwire/agents without being able to change them.
RUN useradd --create-home --uid 10001 agentwire && mkdir -p /workspace && chown agentwire:agentwire /workspace && \
    chmod 700 /root
ENV AGENTWIRE_AGENT_USER=agentwire
# Sessions and events (docs/persistence.md) outlive a container restart when this is a volume.
# It is made 0700 here, so a new named volume starts 0700; the daemon checks it at every start
# (root's and 0700, its files 0600), so agents cannot read other sessions' transcripts.
ENV AGENTWIRE_DATA_DIR=/var/lib/agentwire
RUN mkdir -m 0700 -p /var/lib/agentwire
VOLUME /var/lib/agentwire
WORKDIR /workspace
EXPOSE 2468
HEALTHCHECK --interval=15s --timeout=3s --start-period=5s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.AGENTWIRE_PORT||2468)+'/v1/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/bin/agentwire.js"]
CMD ["server"]
