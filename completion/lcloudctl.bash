# SPDX-License-Identifier: LGPL-2.1-or-later
# bash completion for lcloudctl(1).
#
# Commands and options are read from lcloudctl's own --help, so the
# completion follows the program it completes; values that --help lists in
# words (formats, paths, databases, hints) are completed from the lists below.

# The lcloudctl this file was installed with (the install writes its path here): asked
# when the word typed is no program bash can run, e.g. "lcloudctl" through an alias or
# sudo with the install's bin not on PATH (a prefix of its own). In the source tree it names no program.
_lcloudctl_installed='@LCLOUDCTL@'

_lcloudctl_help_options()
{
    # "  -s, --size N   ..." and "      --no-confirm   ...": every option name
    "$1" ${2:+"$2"} --help 2>/dev/null |
        sed -n 's/^ \{2,8\}\(-[A-Za-z0-9]\)\{0,1\}\(, \)\{0,1\}\(--[a-z][a-z0-9-]*\)\{0,1\}.*/\1 \3/p' |
        tr ' ' '\n' | grep -- '^-'
}

_lcloudctl_commands()
{
    "$1" --help 2>/dev/null | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p'
}

_lcloudctl_block_devices()
{
    local d
    for d in /sys/class/block/*; do
        [[ -e $d ]] && printf '%s\n' "${d##*/}"
    done
}

_lcloudctl()
{
    local cur prev prog sub="" i w
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    prog=${COMP_WORDS[0]}
    if ! type -P -- "$prog" >/dev/null && [[ -x $_lcloudctl_installed ]]; then
        prog=$_lcloudctl_installed
    fi

    # the command: the first word that is not an option or a global option's value
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        case $w in
            --sysroot | -o | --output | --format | =) ((i++)) ;; # "=": bash splits --color=always there
            --color) # --color WHEN as well as --color=WHEN; a bare --color before the command
                [[ ${COMP_WORDS[i + 1]:-} == @(auto|always|never) ]] && ((i++)) ;;
            -*) ;;
            *) sub=$w; break ;;
        esac
    done

    # bash splits --opt=value at "=": "--path", "=", "pl" (or "=" itself right after the "=")
    local attached=""
    if [[ $cur == = ]]; then
        prev=${COMP_WORDS[COMP_CWORD - 1]} cur="" attached=1
    elif [[ $prev == = ]]; then
        prev=${COMP_WORDS[COMP_CWORD - 2]} attached=1
    fi
    # list's options without a value that other commands' options of the same letter take one for
    if [[ $sub == list ]]; then
        case $prev in
            -d | -P) prev="" ;;
            -e | --exclude | -I | --include) return ;; # major numbers
        esac
    fi
    case $prev in
        --sysroot)
            COMPREPLY=($(compgen -d -- "$cur")); return ;;
        -o | --output | --format)
            if [[ $sub == read && $prev != --format ]]; then # the old -o FILE of --out
                COMPREPLY=($(compgen -f -- "$cur"))
            elif [[ $sub == list && $prev != --format ]]; then
                # lsblk's -o: columns, comma separated, +COL adds to the default set
                local cols="NAME PATH SIZE RO TYPE MIN-IO OPT-IO PHY-SEC LOG-SEC ROTA AWU-MIN AWU-MAX AW-MAX"
                cols+=" AW-BOUND STREAMS STREAM-GRAN WC ALIGN MODEL TRAN FSTYPE MOUNTPOINT MOUNTPOINTS"
                cols+=" RWF-ATOMIC PASSTHROUGH PLAIN-DIRECT UNTORN"
                local head=${cur%"${cur##*,}"} last=${cur##*,}
                [[ -z $head && $last == +* ]] && head=+ last=${last#+}
                COMPREPLY=($(compgen -P "$head" -W "$cols" -- "$last"))
                compopt -o nospace 2>/dev/null
            else
                COMPREPLY=($(compgen -W "normal json" -- "$cur"))
            fi
            return ;;
        --color)
            COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
        -d | --db | --for)
            COMPREPLY=($(compgen -W "mysql mariadb postgresql" -- "$cur")); return ;;
        -p | --path)
            case $sub in
                check)
                    COMPREPLY=($(compgen -W "rwf_atomic passthrough plain_direct buffered best" -- "$cur"))
                    return ;;
                torture) # one path a run writes through: "best" is check's choice among them
                    COMPREPLY=($(compgen -W "rwf_atomic passthrough plain_direct buffered" -- "$cur"))
                    return ;;
                write | read) ;; # -p is --pattern there: a byte
            esac
            return ;;
        -H | --hint)
            # what a write is for; what kind of read (write refuses read kinds, and read write classes)
            [[ $sub == write ]] && COMPREPLY=($(compgen -W "data metadata journal background" -- "$cur"))
            [[ $sub == read ]] && COMPREPLY=($(compgen -W "sync readahead" -- "$cur"))
            return ;;
        --lifetime)
            COMPREPLY=($(compgen -W "short medium long extreme" -- "$cur")); return ;;
        --disk-model) # advise: the cloud disk models of cli/disk_models.c
            COMPREPLY=($(compgen -W "gp3 hyperdisk-balanced ops-bound bw-bound" -- "$cur")); return ;;
        --backend)
            COMPREPLY=($(compgen -W "auto passthrough io_uring sync" -- "$cur")); return ;;
        -i | --input | --record | --save | -f | --file | --base | --out | --model-from)
            COMPREPLY=($(compgen -f -- "$cur")); return ;;
        -s | --size | -P | --page-size | -l | --length | -O | --offset)
            COMPREPLY=($(compgen -W "4K 8K 16K 32K 64K" -- "$cur")); return ;;
    esac

    if [[ -z $sub ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$(_lcloudctl_help_options "$prog")" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$(_lcloudctl_commands "$prog")" -- "$cur"))
        fi
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_lcloudctl_help_options "$prog" "$sub")" -- "$cur"))
        return
    fi
    case $sub in
        torture)
            # the first word after torture is its step
            if [[ ${COMP_WORDS[COMP_CWORD - 1]} == torture ]]; then
                COMPREPLY=($(compgen -W "run verify" -- "$cur"))
                return
            fi ;;
        udev)
            COMPREPLY=($(compgen -W "$(_lcloudctl_block_devices)" -- "$cur")); return ;;
        list)
            COMPREPLY=($(compgen -W "$(_lcloudctl_block_devices)" -- "$cur")); return ;;
    esac
    # files, directories and devices (/dev/nvme0n1, /dev/ng0n1)
    COMPREPLY=($(compgen -f -- "$cur"))
    [[ -d ${COMPREPLY[0]:-} && ${#COMPREPLY[@]} -eq 1 ]] && COMPREPLY=("${COMPREPLY[0]}/") && compopt -o nospace 2>/dev/null
}

complete -F _lcloudctl lcloudctl
