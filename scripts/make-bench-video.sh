#!/usr/bin/env bash
# Renders the recordings `farecheck-bench video` measures, with ffmpeg (apt-get install ffmpeg), into DIRECTORY
# (not checked in; e.g. Benchmarks/.build/bench-video):
#
#   scripts/make-bench-video.sh DIRECTORY
#
# Eight tickets issued with the published demo key (Keys/demo-transit-es256.key, valid 2026-2036; four Aztec, four
# QR, each shown once) are held up to a camera one after another, 30 frames a second, 8-bit grey, at 640 × 480
# (handheld-640x480.y4m) and 1280 × 720 (handheld-1280x720.y4m). Each ticket is in view for 36 frames (1.2 s)
# under one condition: moving across the view, moved fast (motion blur), out of focus, noisy and dim, tilted under
# perspective, on a phone screen with glare. Before the first and after each ticket, 15 frames (0.5 s) show the
# empty table, so every frame of a sequence has a known ticket or none.
#
# manifest.tsv is the ground truth: one line per presentation (sequence, first frame, last frame, symbology, payload
# file, condition). ticket-N.bin are the payloads, ticket-N.png the symbols at one pixel a module.
# Needs a built farecheck for issuing: FARECHECK, default Benchmarks/.build/release/farecheck (scripts/bench.sh
# builds it).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -ne 1 ]]; then
    echo "usage: $0 DIRECTORY" >&2
    exit 2
fi
out=$1
farecheck=${FARECHECK:-Benchmarks/.build/${BENCH_CONFIGURATION:-release}/farecheck}
if [[ ! -x $farecheck ]]; then
    echo "$0: no farecheck at $farecheck (build it, e.g. with scripts/bench.sh --help, or set FARECHECK)" >&2
    exit 2
fi
command -v ffmpeg >/dev/null || {
    echo "$0: ffmpeg is needed (apt-get install ffmpeg)" >&2
    exit 2
}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export FARECHECK_DB=$work/issue.sqlite

# ticket NUMBER BARCODE PRODUCT CATEGORY: issued at one pixel a module, scaled up per resolution below.
ticket() {
    "$farecheck" issue --key Keys/demo-transit-es256.key --product "$3" --category "$4" --zones A,B \
        --valid-from 2026-01-01T00:00:00Z --valid-until 2036-01-01T00:00:00Z \
        --ticket-id "$(printf '%02X%.0s' "$1" {1..8})" --barcode "$2" --module-size 1 \
        --out "$out/ticket-$1.png" --payload-out "$out/ticket-$1.bin" >/dev/null
}
# The conditions, in the order the tickets are shown: NUMBER BARCODE CONDITION.
conditions=(
    "1 aztec moving"
    "2 qr motion-blur"
    "3 aztec tilted"
    "4 qr noisy"
    "5 aztec blurred"
    "6 qr phone-glare"
    "7 aztec phone-glare"
    "8 qr tilted"
)
products=(single day month single day single day month)
categories=(adult child senior adult reduced adult child adult)
for entry in "${conditions[@]}"; do
    read -r number barcode _ <<<"$entry"
    ticket "$number" "$barcode" "${products[$((number - 1))]}" "${categories[$((number - 1))]}"
done

frames=36
gap=15
ff() { ffmpeg -nostdin -loglevel error -y "$@"; }

# segment FILE TICKET-FILTERS SCENE-FILTERS X Y: one ticket over the table for $frames frames. TICKET-FILTERS turn
# the scaled ticket (grey, padded with white paper) into what lies on the table; X and Y are overlay expressions
# (t: seconds into the segment); SCENE-FILTERS act on the whole frame (blur, noise).
segment() {
    ff -f lavfi -i "$table" -framerate 30 -loop 1 -i "$ticket_png" -filter_complex \
        "[1:v]format=gray,scale=iw*$module:ih*$module:flags=neighbor,format=yuva444p,$2[t];
         [0:v][t]overlay=x='$4':y='$5':shortest=1:eval=frame,$3,format=gray" \
        -frames:v "$frames" -r 30 -f yuv4mpegpipe -pix_fmt gray "$1"
}
empty() {
    ff -f lavfi -i "$table" -vf "noise=alls=8:allf=t,format=gray" -frames:v "$gap" -r 30 -f yuv4mpegpipe \
        -pix_fmt gray "$1"
}

printf '# sequence\tfirst-frame\tlast-frame\tsymbology\tpayload\tcondition\n' >"$out/manifest.tsv"
for size in 640x480 1280x720; do
    width=${size%x*}
    height=${size#*x}
    # Pixels a module: a ticket held at the same distance covers more pixels of the larger frame.
    module=$((width == 640 ? 3 : 4))
    # An evenly lit table, lighter to one side.
    table="gradients=s=$size:r=30:d=60:c0=0x707070:c1=0xb8b8b8:x0=0:y0=0:x1=$width:y1=$height:speed=0.0001"
    sequence=handheld-$size.y4m
    list=$work/list-$size.txt
    : >"$list"
    empty "$work/$size-gap0.y4m"
    echo "file '$work/$size-gap0.y4m'" >>"$list"
    first=$gap
    for entry in "${conditions[@]}"; do
        read -r number barcode condition <<<"$entry"
        ticket_png=$out/ticket-$number.png
        file=$work/$size-$number.y4m
        paper="pad=iw+8*$module:ih+8*$module:4*$module:4*$module:white"
        # A transparent margin, so that what perspective pulls in from the edges is no paper.
        clear="pad=iw*1.3:ih*1.3:(ow-iw)/2:(oh-ih)/2:black@0"
        across="(W-w)*(0.1+0.6*t/1.2)"
        middle="(H-h)/2+0.04*H*sin(4*t)"
        case $condition in
            moving)
                # Slid across the view, turning a little as the hand moves.
                segment "$file" "$paper,rotate=a='0.12*sin(3*t)':c=none:ow=rotw(0.12):oh=roth(0.12)" \
                    "gblur=sigma=0.6,noise=alls=8:allf=t" "$across" "$middle" ;;
            motion-blur)
                # Moved fast (across most of the view in 1.2 s), smeared along the motion by the exposure.
                segment "$file" "$paper,rotate=a=0.05:c=none:ow=rotw(0.05):oh=roth(0.05)" \
                    "avgblur=sizeX=$((module - 2)):sizeY=0,noise=alls=8:allf=t" \
                    "(W-w)*(0.05+0.9*t/1.2)" "$middle" ;;
            tilted)
                # Held at an angle to the camera: perspective, turned, a little soft.
                segment "$file" \
                    "$paper,$clear,perspective=x0=0.12*W:y0=0.06*H:x1=0.93*W:y1=0:x2=0:y2=H:x3=W:y3=0.88*H:sense=destination,rotate=a='0.45+0.1*t':c=none:ow=rotw(0.55):oh=roth(0.55)" \
                    "gblur=sigma=0.7,noise=alls=8:allf=t" "(W-w)/2+0.1*W*sin(2*t)" "$middle" ;;
            noisy)
                # A dim carriage: low contrast and strong sensor noise.
                segment "$file" "$paper,rotate=a=-0.1:c=none:ow=rotw(0.1):oh=roth(0.1)" \
                    "eq=contrast=0.55:brightness=-0.12,gblur=sigma=0.5,noise=alls=26:allf=t" "$across" "$middle" ;;
            blurred)
                # Out of focus: held too close for the lens.
                segment "$file" "$paper,scale=iw*1.15:ih*1.15,rotate=a=0.2:c=none:ow=rotw(0.2):oh=roth(0.2)" \
                    "gblur=sigma=$((module - 1)).$((module == 3 ? 4 : 2)),noise=alls=8:allf=t" "(W-w)/2" "$middle" ;;
            phone-glare)
                # A phone screen (white around the symbol, a black bezel) with a reflection moving across it.
                segment "$file" \
                    "pad=iw+6*$module:ih+6*$module:3*$module:3*$module:white,pad=iw+12*$module:ih+30*$module:6*$module:15*$module:black,geq=lum='min(255,0.8*lum(X,Y)+25+190*exp(-(pow(X-W*(0.2+0.5*T/1.2),2)+pow(Y-H*0.45,2))/(0.02*W*W)))':cb=128:cr=128:a='alpha(X,Y)',rotate=a=-0.15:c=none:ow=rotw(0.15):oh=roth(0.15)" \
                    "gblur=sigma=0.6,noise=alls=10:allf=t" "(W-w)*(0.3+0.3*t/1.2)" "$middle" ;;
        esac
        empty "$work/$size-gap$number.y4m"
        printf "file '%s'\nfile '%s'\n" "$file" "$work/$size-gap$number.y4m" >>"$list"
        printf '%s\t%d\t%d\t%s\tticket-%d.bin\t%s\n' "$sequence" "$first" "$((first + frames - 1))" "$barcode" \
            "$number" "$condition" >>"$out/manifest.tsv"
        first=$((first + frames + gap))
    done
    ff -f concat -safe 0 -i "$list" -f yuv4mpegpipe -pix_fmt gray "$out/$sequence"
done
ls -l "$out"
