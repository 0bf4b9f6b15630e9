#!/bin/sh
# check_tls.sh - every guest program must start its TLS segment exactly at
# __tls_base, where crt0 points tp; otherwise thread-locals such as errno
# land on other variables.  Usage: check_tls.sh READELF NM PROGRAM...
readelf=$1; nm=$2; shift 2
bad=0
for prog in "$@"; do
	tls=$("$readelf" -lW "$prog" | awk '$1 == "TLS" { print $3 }')
	base=$("$nm" "$prog" | awk '$3 == "__tls_base" { print "0x" $1 }')
	if [ -z "$tls" ] || [ -z "$base" ] || [ $((tls)) -ne $((base)) ]; then
		echo "FAIL: $prog: TLS segment at ${tls:-none}, __tls_base ${base:-undefined}"
		bad=1
	fi
done
[ $bad -eq 0 ] && echo "ok: TLS segment starts at __tls_base in $# programs"
exit $bad
