#!/bin/sh
# Idempotent: installs Debian's mariadb-server when missing, starts mariadbd on $MYSQL_PORT
# (default 3306) with data under $MYSQL_DATA (default /var/lib/mysql-ci), and creates the database
# and user of $TEST_MYSQL_URL's shape: mysql://app:app@127.0.0.1:PORT/app_test.
# The server keeps its default collation (utf8mb4_general_ci, case-insensitive) as production
# servers do: the migrations, not the server, make comparisons exact. Durability is the default too
# (innodb_flush_log_at_trx_commit=1: each commit waits for its flush), so tests and the bench see
# what an operator runs.
set -e
port=${MYSQL_PORT:-3306}
data=${MYSQL_DATA:-/var/lib/mysql-ci}
sock=/run/mysqld/mysqld-ci.sock
if ! command -v mariadbd >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends mariadb-server >/dev/null
fi
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
if ! mariadb-admin --socket="$sock" ping >/dev/null 2>&1; then
  if [ ! -d "$data/mysql" ]; then
    mkdir -p "$data" && chown mysql:mysql "$data"
    mariadb-install-db --user=mysql --datadir="$data" --auth-root-authentication-method=socket >/dev/null
  fi
  mariadbd --user=mysql --datadir="$data" --socket="$sock" --port="$port" --bind-address=127.0.0.1 \
    --skip-name-resolve --max-connections=500 \
    --character-set-server=utf8mb4 \
    --log-error="$data/error.log" >/dev/null 2>&1 &
  i=0
  until mariadb-admin --socket="$sock" ping >/dev/null 2>&1; do
    i=$((i+1)); [ $i -gt 60 ] && { echo "mariadbd did not start; see $data/error.log" >&2; exit 1; }
    sleep 0.5
  done
fi
mariadb --socket="$sock" -e "CREATE USER IF NOT EXISTS 'app'@'127.0.0.1' IDENTIFIED BY 'app';
  CREATE DATABASE IF NOT EXISTS app_test; CREATE DATABASE IF NOT EXISTS app;
  GRANT ALL ON *.* TO 'app'@'127.0.0.1'; FLUSH PRIVILEGES;"
echo "mysql://app:app@127.0.0.1:$port/app_test"
