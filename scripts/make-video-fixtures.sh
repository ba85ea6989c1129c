#!/usr/bin/env bash
# Renders the recorded sequences under Tests/Fixtures/video with ffmpeg (apt-get install ffmpeg) from two tickets
# issued with the published demo key (Keys/demo-transit-es256.key), valid 2026-2036:
#   ticket-aztec.png / .bin  a day ticket, Aztec, 3 pixels a module
#   ticket-qr.png / .bin     a single ticket, QR, 3 pixels a module
# and writes:
#   handheld-320x240-gray.y4m   4 frames a second, 8-bit grey: the Aztec ticket moves in, tilts and moves, blurred
#                               (frames 0-7), leaves the view (8-13), comes back blurred (14-17), then the QR ticket
#                               comes, noisy (18-23)
#   handheld-320x240-420.y4m    the same first 8 frames as 4:2:0 (what ffmpeg writes for yuv420p)
# Needs a built farecheck (FARECHECK, default .build/debug/farecheck) for issuing.
set -euo pipefail
cd "$(dirname "$0")/.."
farecheck=${FARECHECK:-.build/debug/farecheck}
out=Tests/Fixtures/video
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
key=Keys/demo-transit-es256.key
export FARECHECK_DB=$work/issue.sqlite
"$farecheck" issue --key "$key" --product day --zones A,B --category adult --valid-from 2026-01-01T00:00:00Z \
    --valid-until 2036-01-01T00:00:00Z --ticket-id 0A0A0A0A0A0A0A0A --barcode aztec --module-size 3 \
    --out "$out/ticket-aztec.png" --payload-out "$out/ticket-aztec.bin"
"$farecheck" issue --key "$key" --product single --category child --valid-from 2026-01-01T00:00:00Z \
    --valid-until 2036-01-01T00:00:00Z --ticket-id 0B0B0B0B0B0B0B0B --barcode qr --module-size 3 \
    --out "$out/ticket-qr.png" --payload-out "$out/ticket-qr.bin"

ff() { ffmpeg -loglevel error -y "$@"; }
background="color=c=0xa8a8a8:s=320x240:r=4"
# A ticket on a grey table: padded white paper, turned a little as the hand moves, moved across the view.
# segment NAME TICKET SECONDS X Y BLUR NOISE
segment() {
    ff -f lavfi -i "$background:d=$3" -loop 1 -framerate 4 -i "$2" -filter_complex \
        "[1:v]format=gray,pad=iw+12:ih+12:6:6:white,rotate=a='0.08*sin(2*t)':c=0xa8a8a8:ow=rotw(0.08):oh=roth(0.08)[t];
         [0:v][t]overlay=x='$4':y='$5':shortest=1,gblur=sigma=$6,noise=alls=$7:allf=t,format=gray" \
        -frames:v "$(($3 * 4))" -f yuv4mpegpipe -pix_fmt gray "$work/$1.y4m"
}
segment a1 "$out/ticket-aztec.png" 2 "20+30*t" "25+4*t" 0.6 10
ff -f lavfi -i "$background:d=1.5" -vf "noise=alls=10:allf=t,format=gray" -frames:v 6 -f yuv4mpegpipe \
    -pix_fmt gray "$work/empty.y4m"
segment a2 "$out/ticket-aztec.png" 1 "90-20*t" "30" 1.0 10
ff -f lavfi -i "$background:d=2" -loop 1 -framerate 4 -i "$out/ticket-qr.png" -filter_complex \
    "[1:v]format=gray,pad=iw+8:ih+8:4:4:white,rotate=a=0.06:c=0xa8a8a8:ow=rotw(0.06):oh=roth(0.06)[t];
     [0:v][t]overlay=x='40+16*t':y=8:shortest=1,gblur=sigma=0.5,noise=alls=16:allf=t,format=gray" \
    -frames:v 6 -f yuv4mpegpipe -pix_fmt gray "$work/q.y4m"
printf "file '%s'\n" "$work/a1.y4m" "$work/empty.y4m" "$work/a2.y4m" "$work/q.y4m" >"$work/list.txt"
ff -f concat -safe 0 -i "$work/list.txt" -f yuv4mpegpipe -pix_fmt gray "$out/handheld-320x240-gray.y4m"
ff -i "$work/a1.y4m" -f yuv4mpegpipe -pix_fmt yuv420p "$out/handheld-320x240-420.y4m"
ls -l "$out"
