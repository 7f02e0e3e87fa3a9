#!/bin/bash

__modeldepot_cursor_index_in_current_word() {
    local remaining="${COMP_LINE}"

    local word
    for word in "${COMP_WORDS[@]::COMP_CWORD}"; do
        remaining="${remaining##*([[:space:]])"${word}"*([[:space:]])}"
    done

    local -ir index="$((COMP_POINT - ${#COMP_LINE} + ${#remaining}))"
    if [[ "${index}" -le 0 ]]; then
        printf 0
    else
        printf %s "${index}"
    fi
}

# positional arguments:
#
# - 1: the current (sub)command's count of positional arguments
#
# required variables:
#
# - repeating_flags: the repeating flags that the current (sub)command can accept
# - non_repeating_flags: the non-repeating flags that the current (sub)command can accept
# - repeating_options: the repeating options that the current (sub)command can accept
# - non_repeating_options: the non-repeating options that the current (sub)command can accept
# - positional_number: value ignored
# - unparsed_words: unparsed words from the current command line
#
# modified variables:
#
# - non_repeating_flags: remove flags for this (sub)command that are already on the command line
# - non_repeating_options: remove options for this (sub)command that are already on the command line
# - positional_number: set to the current positional number
# - unparsed_words: remove all flags, options, and option values for this (sub)command
__modeldepot_offer_flags_options() {
    local -ir positional_count="${1}"
    positional_number=0

    local was_flag_option_terminator_seen=false
    local is_parsing_option_value=false

    local -ar unparsed_word_indices=("${!unparsed_words[@]}")
    local -i word_index
    for word_index in "${unparsed_word_indices[@]}"; do
        if "${is_parsing_option_value}"; then
            # This word is an option value:
            # Reset marker for next word iff not currently the last word
            [[ "${word_index}" -ne "${unparsed_word_indices[${#unparsed_word_indices[@]} - 1]}" ]] && is_parsing_option_value=false
            unset "unparsed_words[${word_index}]"
            # Do not process this word as a flag or an option
            continue
        fi

        local word="${unparsed_words["${word_index}"]}"
        if ! "${was_flag_option_terminator_seen}"; then
            case "${word}" in
            --)
                unset "unparsed_words[${word_index}]"
                # by itself -- is a flag/option terminator, but if it is the last word, it is the start of a completion
                if [[ "${word_index}" -ne "${unparsed_word_indices[${#unparsed_word_indices[@]} - 1]}" ]]; then
                    was_flag_option_terminator_seen=true
                fi
                continue
                ;;
            -*)
                # ${word} is a flag or an option
                # If ${word} is an option, mark that the next word to be parsed is an option value
                local option
                for option in "${repeating_options[@]}" "${non_repeating_options[@]}"; do
                    [[ "${word}" = "${option}" ]] && is_parsing_option_value=true && break
                done

                # Remove ${word} from ${non_repeating_flags} or ${non_repeating_options} so it isn't offered again
                local not_found=true
                local -i index
                for index in "${!non_repeating_flags[@]}"; do
                    if [[ "${non_repeating_flags[${index}]}" = "${word}" ]]; then
                        unset "non_repeating_flags[${index}]"
                        non_repeating_flags=("${non_repeating_flags[@]}")
                        not_found=false
                        break
                    fi
                done
                if "${not_found}"; then
                    for index in "${!non_repeating_flags[@]}"; do
                        if [[ "${non_repeating_flags[${index}]}" = "${word}" ]]; then
                            unset "non_repeating_flags[${index}]"
                            non_repeating_flags=("${non_repeating_flags[@]}")
                            break
                        fi
                    done
                fi
                unset "unparsed_words[${word_index}]"
                continue
                ;;
            esac
        fi

        # ${word} is neither a flag, nor an option, nor an option value
        if [[ "${positional_number}" -lt "${positional_count}" || "${positional_count}" -lt 0 ]]; then
            # ${word} is a positional
            ((positional_number++))
            unset "unparsed_words[${word_index}]"
        else
            if [[ -z "${word}" ]]; then
                # Could be completing a flag, option, or subcommand
                positional_number=-1
            else
                # ${word} is a subcommand or invalid, so stop processing this (sub)command
                positional_number=-2
            fi
            break
        fi
    done

    unparsed_words=("${unparsed_words[@]}")

    if\
        ! "${was_flag_option_terminator_seen}"\
        && ! "${is_parsing_option_value}"\
        && [[ ("${cur}" = -* && "${positional_number}" -ge 0) || "${positional_number}" -eq -1 ]]
    then
        COMPREPLY+=($(compgen -W "${repeating_flags[*]} ${non_repeating_flags[*]} ${repeating_options[*]} ${non_repeating_options[*]}" -- "${cur}"))
    fi
}

__modeldepot_add_completions() {
    local completion
    while IFS='' read -r completion; do
        COMPREPLY+=("${completion}")
    done < <(IFS=$'\n' compgen "${@}" -- "${cur}")
}

__modeldepot_custom_complete() {
    if [[ -n "${cur}" || -z ${COMP_WORDS[${COMP_CWORD}]} || "${COMP_LINE:${COMP_POINT}:1}" != ' ' ]]; then
        local -ar words=("${COMP_WORDS[@]}")
    else
        local -ar words=("${COMP_WORDS[@]::${COMP_CWORD}}" '' "${COMP_WORDS[@]:${COMP_CWORD}}")
    fi

    "${COMP_WORDS[0]}" "${@}" "${words[@]}"
}

_modeldepot() {
    local state
    state="$(shopt -p;shopt -po)"
    trap "${state//$'\n'/;}" RETURN
    shopt -s extglob
    set +o history +o posix

    local -xr SAP_SHELL=bash
    local -x SAP_SHELL_VERSION
    SAP_SHELL_VERSION="$(IFS='.';printf %s "${BASH_VERSINFO[*]}")"
    local -r SAP_SHELL_VERSION

    local -r cur="${2}"
    local -r prev="${3}"

    local -i positional_number
    local -a unparsed_words=("${COMP_WORDS[@]:1:${COMP_CWORD}}")

    local -a repeating_flags=()
    local -a non_repeating_flags=(--version -h --help)
    local -a repeating_options=()
    local -a non_repeating_options=()
    __modeldepot_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    pull|catalog|search|discover|ls|status|info|path|verify|bom|rm|prune|pin|lock|export|import|push|serve|ui|chat|embed|transcribe|demo|env|help)
        # Offer subcommand argument completions
        "_modeldepot_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'pull catalog search discover ls status info path verify bom rm prune pin lock export import push serve ui chat embed transcribe demo env help' -- "${cur}"))
        ;;
    esac
}

_modeldepot_pull() {
    repeating_flags=()
    non_repeating_flags=(--offline --discover --insecure --verbose --plain-http --force-download --dry-run --fsync --require-signature --refuse-pickle --trust-registry --json --quiet -q --version -h --help)
    repeating_options=(--include --exclude --mirror --ca-cert)
    non_repeating_options=(--locked --revision --cache-dir --repo-type --endpoint --token --proxy --max-rate-limit-wait --registry-token-file --catalog --output -o --sha256 --connections --initial-connections --max-rate --max-workers --local-dir --xet --transport --trusted-key --trusted-certificate --certificate-identity --signature-path)
    __modeldepot_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--locked')
        return
        ;;
    '--revision')
        return
        ;;
    '--include')
        return
        ;;
    '--exclude')
        return
        ;;
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    '--endpoint')
        return
        ;;
    '--token')
        return
        ;;
    '--mirror')
        return
        ;;
    '--proxy')
        return
        ;;
    '--ca-cert')
        return
        ;;
    '--max-rate-limit-wait')
        return
        ;;
    '--registry-token-file')
        return
        ;;
    '--catalog')
        return
        ;;
    '--output'|'-o')
        return
        ;;
    '--sha256')
        return
        ;;
    '--connections')
        return
        ;;
    '--initial-connections')
        return
        ;;
    '--max-rate')
        return
        ;;
    '--max-workers')
        return
        ;;
    '--local-dir')
        return
        ;;
    '--xet')
        __modeldepot_add_completions -W 'auto'$'\n''never'$'\n''always'
        return
        ;;
    '--transport')
        __modeldepot_add_completions -W 'urlsession'$'\n''ahc'
        return
        ;;
    '--trusted-key')
        return
        ;;
    '--trusted-certificate')
        return
        ;;
    '--certificate-identity')
        return
        ;;
    '--signature-path')
        return
        ;;
    esac
}

_modeldepot_catalog() {
    repeating_flags=()
    non_repeating_flags=(--recommended --json --version -h --help)
    repeating_options=()
    non_repeating_options=(--capability --format --catalog)
    __modeldepot_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--capability')
        return
        ;;
    '--format')
        return
        ;;
    '--catalog')
        return
        ;;
    esac
}

_modeldepot_search() {
    repeating_flags=()
    non_repeating_flags=(--json --offline --discover --insecure --verbose --version -h --help)
    repeating_options=(--mirror --ca-cert)
    non_repeating_options=(--author --limit --cache-dir --repo-type --endpoint --token --proxy --max-rate-limit-wait)
    __modeldepot_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--author')
        return
        ;;
    '--limit')
        return
        ;;
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    '--endpoint')
        return
        ;;
    '--token')
        return
        ;;
    '--mirror')
        return
        ;;
    '--proxy')
        return
        ;;
    '--ca-cert')
        return
        ;;
    '--max-rate-limit-wait')
        return
        ;;
    esac
}

_modeldepot_discover() {
    repeating_flags=()
    non_repeating_flags=(--json --version -h --help)
    repeating_options=()
    non_repeating_options=(--wait)
    __modeldepot_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--wait')
        return
        ;;
    esac
}

_modeldepot_ls() {
    repeating_flags=()
    non_repeating_flags=(--json --version -h --help)
    repeating_options=(--filter)
    non_repeating_options=(--cache-dir --sort --limit)
    __modeldepot_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--cache-dir')
        return
        ;;
    '--filter')
        return
        ;;
    '--sort')
        return
        ;;
    '--limit')
        return
        ;;
    esac
}

_modeldepot_status() {
    repeating_flags=()
    non_repeating_flags=(--verify --json --version -h --help)
    repeating_options=(--include)
    non_repeating_options=(--revision --cache-dir --repo-type --catalog)
    __modeldepot_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--revision')
        return
        ;;
    '--include')
        return
        ;;
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    '--catalog')
        return
        ;;
    esac
}

_modeldepot_info() {
    repeating_flags=()
    non_repeating_flags=(--json --offline --discover --insecure --verbose --version -h --help)
    repeating_options=(--include --exclude --mirror --ca-cert)
    non_repeating_options=(--revision --cache-dir --repo-type --endpoint --token --proxy --max-rate-limit-wait --catalog)
    __modeldepot_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--revision')
        return
        ;;
    '--include')
        return
        ;;
    '--exclude')
        return
        ;;
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    '--endpoint')
        return
        ;;
    '--token')
        return
        ;;
    '--mirror')
        return
        ;;
    '--proxy')
        return
        ;;
    '--ca-cert')
        return
        ;;
    '--max-rate-limit-wait')
        return
        ;;
    '--catalog')
        return
        ;;
    esac
}

_modeldepot_path() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--revision --cache-dir --repo-type)
    __modeldepot_offer_flags_options 2

    # Offer option value completions
    case "${prev}" in
    '--revision')
        return
        ;;
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    esac
}

_modeldepot_verify() {
    repeating_flags=()
    non_repeating_flags=(--repair --signature --json --offline --discover --insecure --verbose --plain-http --version -h --help)
    repeating_options=(--mirror --ca-cert)
    non_repeating_options=(--lock --trusted-key --trusted-certificate --certificate-identity --signature-path --cache-dir --repo-type --endpoint --token --proxy --max-rate-limit-wait --registry-token-file)
    __modeldepot_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--lock')
        return
        ;;
    '--trusted-key')
        return
        ;;
    '--trusted-certificate')
        return
        ;;
    '--certificate-identity')
        return
        ;;
    '--signature-path')
        return
        ;;
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    '--endpoint')
        return
        ;;
    '--token')
        return
        ;;
    '--mirror')
        return
        ;;
    '--proxy')
        return
        ;;
    '--ca-cert')
        return
        ;;
    '--max-rate-limit-wait')
        return
        ;;
    '--registry-token-file')
        return
        ;;
    esac
}

_modeldepot_bom() {
    repeating_flags=()
    non_repeating_flags=(--spdx --offline --discover --insecure --verbose --plain-http --version -h --help)
    repeating_options=(--include --exclude --mirror --ca-cert)
    non_repeating_options=(--revision --lock --output -o --trusted-key --trusted-certificate --certificate-identity --signature-path --cache-dir --repo-type --endpoint --token --proxy --max-rate-limit-wait --registry-token-file)
    __modeldepot_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--revision')
        return
        ;;
    '--lock')
        return
        ;;
    '--output'|'-o')
        return
        ;;
    '--include')
        return
        ;;
    '--exclude')
        return
        ;;
    '--trusted-key')
        return
        ;;
    '--trusted-certificate')
        return
        ;;
    '--certificate-identity')
        return
        ;;
    '--signature-path')
        return
        ;;
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    '--endpoint')
        return
        ;;
    '--token')
        return
        ;;
    '--mirror')
        return
        ;;
    '--proxy')
        return
        ;;
    '--ca-cert')
        return
        ;;
    '--max-rate-limit-wait')
        return
        ;;
    '--registry-token-file')
        return
        ;;
    esac
}

_modeldepot_rm() {
    repeating_flags=()
    non_repeating_flags=(--yes -y --dry-run --version -h --help)
    repeating_options=(--revision)
    non_repeating_options=(--cache-dir --repo-type)
    __modeldepot_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--revision')
        return
        ;;
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    esac
}

_modeldepot_prune() {
    repeating_flags=()
    non_repeating_flags=(--detached --dry-run --json --version -h --help)
    repeating_options=()
    non_repeating_options=(--max-size --older-than --cache-dir --repo-type)
    __modeldepot_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--max-size')
        return
        ;;
    '--older-than')
        return
        ;;
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    esac
}

_modeldepot_pin() {
    repeating_flags=()
    non_repeating_flags=(--remove --version -h --help)
    repeating_options=()
    non_repeating_options=(--cache-dir --repo-type --catalog)
    __modeldepot_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    '--catalog')
        return
        ;;
    esac
}

_modeldepot_lock() {
    repeating_flags=()
    non_repeating_flags=(--check --update --json --offline --discover --insecure --verbose --plain-http --trust-registry --version -h --help)
    repeating_options=(--include --exclude --mirror --ca-cert)
    non_repeating_options=(--output -o --cache-dir --repo-type --endpoint --token --proxy --max-rate-limit-wait --registry-token-file --catalog)
    __modeldepot_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--include')
        return
        ;;
    '--exclude')
        return
        ;;
    '--output'|'-o')
        return
        ;;
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    '--endpoint')
        return
        ;;
    '--token')
        return
        ;;
    '--mirror')
        return
        ;;
    '--proxy')
        return
        ;;
    '--ca-cert')
        return
        ;;
    '--max-rate-limit-wait')
        return
        ;;
    '--registry-token-file')
        return
        ;;
    '--catalog')
        return
        ;;
    esac
}

_modeldepot_export() {
    repeating_flags=()
    non_repeating_flags=(--offline --discover --insecure --verbose --version -h --help)
    repeating_options=(--mirror --ca-cert)
    non_repeating_options=(--lock --to --archive --layout --cache-dir --repo-type --endpoint --token --proxy --max-rate-limit-wait)
    __modeldepot_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--lock')
        return
        ;;
    '--to')
        return
        ;;
    '--archive')
        return
        ;;
    '--layout')
        __modeldepot_add_completions -W 'bundle'$'\n''app'
        return
        ;;
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    '--endpoint')
        return
        ;;
    '--token')
        return
        ;;
    '--mirror')
        return
        ;;
    '--proxy')
        return
        ;;
    '--ca-cert')
        return
        ;;
    '--max-rate-limit-wait')
        return
        ;;
    esac
}

_modeldepot_import() {
    repeating_flags=()
    non_repeating_flags=(--offline --discover --insecure --verbose --version -h --help)
    repeating_options=(--mirror --ca-cert)
    non_repeating_options=(--cache-dir --repo-type --endpoint --token --proxy --max-rate-limit-wait)
    __modeldepot_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    '--endpoint')
        return
        ;;
    '--token')
        return
        ;;
    '--mirror')
        return
        ;;
    '--proxy')
        return
        ;;
    '--ca-cert')
        return
        ;;
    '--max-rate-limit-wait')
        return
        ;;
    esac
}

_modeldepot_push() {
    repeating_flags=()
    non_repeating_flags=(--plain-http --offline --discover --insecure --verbose --json --version -h --help)
    repeating_options=(--mount-from --mirror --ca-cert)
    non_repeating_options=(--registry-token-file --cache-dir --repo-type --endpoint --token --proxy --max-rate-limit-wait --catalog)
    __modeldepot_offer_flags_options 2

    # Offer option value completions
    case "${prev}" in
    '--mount-from')
        return
        ;;
    '--registry-token-file')
        return
        ;;
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    '--endpoint')
        return
        ;;
    '--token')
        return
        ;;
    '--mirror')
        return
        ;;
    '--proxy')
        return
        ;;
    '--ca-cert')
        return
        ;;
    '--max-rate-limit-wait')
        return
        ;;
    '--catalog')
        return
        ;;
    esac
}

_modeldepot_serve() {
    repeating_flags=()
    non_repeating_flags=(--cache --finish-abandoned-pulls --advertise --ui --xet --xet-uploads --no-sendfile --version -h --help)
    repeating_options=(--allowed-host)
    non_repeating_options=(--config --root --dataset-root --cache-dir --upstream --upstream-token-file --branch-ttl --max-size --max-upstream-pulls --max-queued-pulls --max-pulls-per-client --abandoned-pull-grace --drain-timeout --host --advertise-name --port --token-file --tls-cert --tls-key --faults --max-connections --idle-timeout --admin-token-file)
    __modeldepot_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--config')
        return
        ;;
    '--root')
        return
        ;;
    '--dataset-root')
        return
        ;;
    '--cache-dir')
        return
        ;;
    '--upstream')
        return
        ;;
    '--upstream-token-file')
        return
        ;;
    '--branch-ttl')
        return
        ;;
    '--max-size')
        return
        ;;
    '--allowed-host')
        return
        ;;
    '--max-upstream-pulls')
        return
        ;;
    '--max-queued-pulls')
        return
        ;;
    '--max-pulls-per-client')
        return
        ;;
    '--abandoned-pull-grace')
        return
        ;;
    '--drain-timeout')
        return
        ;;
    '--host')
        return
        ;;
    '--advertise-name')
        return
        ;;
    '--port')
        return
        ;;
    '--token-file')
        return
        ;;
    '--tls-cert')
        return
        ;;
    '--tls-key')
        return
        ;;
    '--faults')
        return
        ;;
    '--max-connections')
        return
        ;;
    '--idle-timeout')
        return
        ;;
    '--admin-token-file')
        return
        ;;
    esac
}

_modeldepot_ui() {
    repeating_flags=()
    non_repeating_flags=(--open --demo --offline --discover --insecure --verbose --version -h --help)
    repeating_options=(--mirror --ca-cert)
    non_repeating_options=(--host --drain-timeout --port --token-file --chat-endpoint --chat-local --chat-model --embed-local --transcribe-endpoint --transcribe-local --cache-dir --repo-type --endpoint --token --proxy --max-rate-limit-wait --catalog --tls-cert --tls-key)
    __modeldepot_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--host')
        return
        ;;
    '--drain-timeout')
        return
        ;;
    '--port')
        return
        ;;
    '--token-file')
        return
        ;;
    '--chat-endpoint')
        return
        ;;
    '--chat-local')
        return
        ;;
    '--chat-model')
        return
        ;;
    '--embed-local')
        return
        ;;
    '--transcribe-endpoint')
        return
        ;;
    '--transcribe-local')
        return
        ;;
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    '--endpoint')
        return
        ;;
    '--token')
        return
        ;;
    '--mirror')
        return
        ;;
    '--proxy')
        return
        ;;
    '--ca-cert')
        return
        ;;
    '--max-rate-limit-wait')
        return
        ;;
    '--catalog')
        return
        ;;
    '--tls-cert')
        return
        ;;
    '--tls-key')
        return
        ;;
    esac
}

_modeldepot_chat() {
    repeating_flags=()
    non_repeating_flags=(--json --version -h --help)
    repeating_options=(--stop)
    non_repeating_options=(--endpoint --local --model --api-key --context --cache-dir --repo-type --catalog --system --preset --temperature --max-tokens --prompt)
    __modeldepot_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--endpoint')
        return
        ;;
    '--local')
        return
        ;;
    '--model')
        return
        ;;
    '--api-key')
        return
        ;;
    '--context')
        return
        ;;
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    '--catalog')
        return
        ;;
    '--system')
        return
        ;;
    '--preset')
        return
        ;;
    '--temperature')
        return
        ;;
    '--max-tokens')
        return
        ;;
    '--stop')
        return
        ;;
    '--prompt')
        return
        ;;
    esac
}

_modeldepot_embed() {
    repeating_flags=()
    non_repeating_flags=(--similarity --json --version -h --help)
    repeating_options=()
    non_repeating_options=(--endpoint --local --model --api-key --context --cache-dir --repo-type --catalog --batch-file)
    __modeldepot_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--endpoint')
        return
        ;;
    '--local')
        return
        ;;
    '--model')
        return
        ;;
    '--api-key')
        return
        ;;
    '--context')
        return
        ;;
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    '--catalog')
        return
        ;;
    '--batch-file')
        return
        ;;
    esac
}

_modeldepot_transcribe() {
    repeating_flags=()
    non_repeating_flags=(--translate --word-timestamps --json --version -h --help)
    repeating_options=()
    non_repeating_options=(--endpoint --local --model --api-key --language --format --prompt --temperature --output-dir --upload-limit --cache-dir --repo-type --catalog)
    __modeldepot_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--endpoint')
        return
        ;;
    '--local')
        return
        ;;
    '--model')
        return
        ;;
    '--api-key')
        return
        ;;
    '--language')
        return
        ;;
    '--format')
        return
        ;;
    '--prompt')
        return
        ;;
    '--temperature')
        return
        ;;
    '--output-dir')
        return
        ;;
    '--upload-limit')
        return
        ;;
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    '--catalog')
        return
        ;;
    esac
}

_modeldepot_demo() {
    repeating_flags=()
    non_repeating_flags=(--json --quiet -q --version -h --help)
    repeating_options=()
    non_repeating_options=(--size-mib --cache-dir --real-model)
    __modeldepot_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--size-mib')
        return
        ;;
    '--cache-dir')
        return
        ;;
    '--real-model')
        return
        ;;
    esac
}

_modeldepot_env() {
    repeating_flags=()
    non_repeating_flags=(--json --offline --discover --insecure --verbose --version -h --help)
    repeating_options=(--mirror --ca-cert)
    non_repeating_options=(--cache-dir --repo-type --endpoint --token --proxy --max-rate-limit-wait)
    __modeldepot_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--cache-dir')
        return
        ;;
    '--repo-type')
        return
        ;;
    '--endpoint')
        return
        ;;
    '--token')
        return
        ;;
    '--mirror')
        return
        ;;
    '--proxy')
        return
        ;;
    '--ca-cert')
        return
        ;;
    '--max-rate-limit-wait')
        return
        ;;
    esac
}

_modeldepot_help() {
    repeating_flags=()
    non_repeating_flags=(--version)
    repeating_options=()
    non_repeating_options=()
    __modeldepot_offer_flags_options -1
}

complete -o filenames -F _modeldepot modeldepot
