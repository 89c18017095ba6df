#!/usr/bin/env bash
# The alerting rules heapd ships, as Prometheus sees them: `promtool check rules` accepts them,
# `promtool test rules` passes, and every alert is tested both ways (a case where it fires and one
# where it must not: exp_alerts: []).
# Usage: alert_rules_check.sh SOURCE_DIR
set -euo pipefail
dir=$1/dist/prometheus
promtool=/usr/bin/promtool
[ -x "$promtool" ] || { echo "$promtool is missing (Debian package prometheus; .ci/setup installs it)"; exit 1; }
"$promtool" check rules "$dir/heapd-alerts.yml"
(cd "$dir" && "$promtool" test rules heapd-alerts.test.yml)
status=0
for alert in $(sed -n 's/^ *- alert: *//p' "$dir/heapd-alerts.yml"); do
    # The exp_alerts line after each "alertname: ALERT" of the tests.
    cases=$(awk -v a="$alert" '$1 == "alertname:" { hit = ($2 == a); next }
                               hit && $1 == "exp_alerts:" { print ($2 == "[]" ? "quiet" : "fires"); hit = 0 }' \
            "$dir/heapd-alerts.test.yml" | sort -u | tr '\n' ' ')
    if [ "$cases" != "fires quiet " ]; then
        echo "$alert: tested as [${cases% }], not both firing and quiet"
        status=1
    fi
done
[ $status -eq 0 ] && echo "every alert tested firing and quiet"
exit $status
