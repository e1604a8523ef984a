#!/usr/bin/env bash
# Submit the streamdq streaming job to a Spark cluster (YARN, standalone or Kubernetes).
#
#   deploy/spark/submit.sh run.yaml [extra streamdq run args, e.g. --duration 600]
#
# Environment (defaults in brackets):
#   SPARK_HOME            Spark 4.x installation                           [/opt/spark]
#   SPARK_MASTER          e.g. yarn, spark://host:7077, k8s://https://...   [yarn]
#   DEPLOY_MODE           client | cluster                                  [client]
#   SPARK_VERSION         for the native Kafka source package (Kafka sources only)
#                                                                           [from spark-submit --version]
#   STREAMDQ_ENV_ARCHIVE  a packed Python env with streamdq installed (venv-pack/conda-pack);
#                         shipped to executors with --archives. Empty: streamdq must be installed
#                         in the cluster's Python already.                  []
#   EXTRA_PACKAGES        more Maven coordinates, e.g. org.apache.hadoop:hadoop-aws:3.4.1 for s3a://
#                         checkpoints                                       []
# The run config and its checks file are shipped with --files and read from the driver's working
# directory. The Prometheus exporter listens on the driver (sink {type: prometheus, port: 9108}).
# Spark's Kafka package (org.apache.spark:spark-sql-kafka-0-10_2.13) is added with --packages only
# when the run config's source is kafka; a files/clf/generator source needs no Maven access at all
# (unless EXTRA_PACKAGES asks for some).
set -euo pipefail

config=${1:?usage: submit.sh run.yaml [streamdq run args]}
shift
here=$(cd "$(dirname "$0")" && pwd)
SPARK_HOME=${SPARK_HOME:-/opt/spark}
SPARK_MASTER=${SPARK_MASTER:-yarn}
DEPLOY_MODE=${DEPLOY_MODE:-client}
# what the run config needs: its source type and its checks file (next to it, travels with it)
read -r source_type checks < <(python3 -c '
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1])) or {}
source = doc.get("source") or {}
print(str(source.get("type") or "-") if isinstance(source, dict) else "-", doc.get("checks_file") or "")
' "$config")

packages=""
if [ "$source_type" = kafka ]; then
  if [ -z "${SPARK_VERSION:-}" ]; then
    SPARK_VERSION=$("$SPARK_HOME/bin/spark-submit" --version 2>&1 | sed -n 's/.*version \([0-9][0-9.]*\).*/\1/p' | head -1)
  fi
  packages="org.apache.spark:spark-sql-kafka-0-10_2.13:${SPARK_VERSION:?cannot tell the Spark version: set SPARK_VERSION}"
fi
if [ -n "${EXTRA_PACKAGES:-}" ]; then
  packages="${packages:+$packages,}$EXTRA_PACKAGES"
fi

files="$config"
if [ -n "$checks" ]; then
  files="$files,$(cd "$(dirname "$config")" && realpath "$checks")"
fi

args=(
  --master "$SPARK_MASTER"
  --deploy-mode "$DEPLOY_MODE"
  --name "streamdq-$(basename "$config" .yaml)"
  --files "$files"
  --conf spark.sql.ansi.enabled=false
  --conf spark.sql.session.timeZone=UTC
  --conf spark.sql.shuffle.partitions="${SHUFFLE_PARTITIONS:-8}"
  --conf spark.streaming.stopGracefullyOnShutdown=true
)
if [ -n "$packages" ]; then
  args+=(--packages "$packages")
fi
if [ -n "${STREAMDQ_ENV_ARCHIVE:-}" ]; then
  args+=(--archives "${STREAMDQ_ENV_ARCHIVE}#environment"
         --conf spark.pyspark.python=./environment/bin/python)
fi
# in cluster mode the config is read from the container's working dir (shipped by --files)
run_config=$config
[ "$DEPLOY_MODE" = cluster ] && run_config=$(basename "$config")

exec "$SPARK_HOME/bin/spark-submit" "${args[@]}" "$here/streamdq_main.py" "$run_config" "$@"
