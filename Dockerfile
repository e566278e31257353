# agentwire in a container: the daemon listens on all interfaces of the container on 2468.
# Build: docker build -t agentwire .   Run: docker run -p 2468:2468 agentwire
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
# tini as PID 1 reaps orphaned grandchildren of agents (node as PID 1 would leave them as zombies).
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json openapi.json ./
COPY bin ./bin
EXPOSE 2468
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "bin/agentwire.js", "server", "--host", "0.0.0.0", "--port", "2468"]
