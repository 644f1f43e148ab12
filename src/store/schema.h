// The store's schema as an ordered list of migrations. Migration i (0-based)
// brings the database to schema version i + 1. Entries are append-only: a
// released migration is never edited, a change is a new entry.
#pragma once

#include <string>
#include <vector>

namespace kforge {

// The DDL sticks to types and clauses SQLite and PostgreSQL read the same way
// (TEXT, BIGINT, DOUBLE PRECISION, PRIMARY KEY, UNIQUE, REFERENCES, CHECK).
const std::vector<std::string>& StoreMigrations();

// The schema version this binary writes and understands.
int StoreSchemaVersion();

}  // namespace kforge
