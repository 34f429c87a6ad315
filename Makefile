# spaceport: every target installs what it needs first (npm ci behind a stamp file),
# and runs the project's own Node 22 from node_modules/.bin.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)
NODE := node_modules/.bin/node
CLI := $(NODE) lib/cli/main.ts
STAMP := node_modules/.install-stamp

.PHONY: run test check migrate rollback migrate-status migration tenant user token routes bench

$(STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

run: $(STAMP)
	$(NODE) lib/main.ts

test: $(STAMP)
	$(NODE) lib/cli/with-database.ts -- ava --tap | $(NODE) test/summary.ts

check: $(STAMP)
	tsc --noEmit -p tsconfig.json

migrate migrate-status routes: $(STAMP)
	@$(CLI) $@

rollback: $(STAMP)
	@$(CLI) rollback

migration: $(STAMP)
	@$(CLI) migration "$(NAME)"

tenant: $(STAMP)
	@$(CLI) tenant "$(NAME)"

user: $(STAMP)
	@$(CLI) user

token: $(STAMP)
	@$(CLI) token

bench: $(STAMP)
	$(NODE) bench/run.ts
