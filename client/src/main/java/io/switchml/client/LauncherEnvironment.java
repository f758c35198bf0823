package io.switchml.client;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the launchers users already run tell a rank through its environment, read as worker settings
 * (docs/configuration.md, "The environment"): the rank and world size from torchrun and MPI-style
 * launchers ({@code RANK}, {@code WORLD_SIZE}) or from srun ({@code SLURM_PROCID}, {@code SLURM_NTASKS}), the
 * rank of a Kubernetes Indexed Job's pod from {@code JOB_COMPLETION_INDEX} (its completion index, 0..completions-1,
 * which Kubernetes sets in every pod of the Job; the world size is the Job's own setting, given as
 * {@code WORLD_SIZE} or {@code SWITCHML_WORKERS} by its manifest, deploy/kubernetes), and a job name that every rank of one launch derives alike. The job's rule is the Python package's
 * ({@code switchml_torch.backend.launcher_job}), so that Java and Python ranks of one launch meet in one job; both
 * sides pass the cases of {@code client/src/test/resources/launcher-job-names.json}:
 * {@code torch-<TORCHELASTIC_RUN_ID>} unless that is {@code none}, else {@code torch-<MASTER_ADDR>:<MASTER_PORT>},
 * with {@code -restart<N>} after an elastic restart (the dead attempt's job may still be winding down at
 * the switch); under a dynamic rendezvous ({@code TORCHELASTIC_USE_AGENT_STORE=False}: c10d, etcd), where a
 * node that joins later counts its restarts from 0, {@code torch-<TORCHELASTIC_RUN_ID>-<MASTER_ADDR>:<MASTER_PORT>}
 * instead: the address and port the round's rank 0 chose, the same on every node and new in every round;
 * else {@code slurm-<SLURM_JOB_ID>.<SLURM_STEP_ID>}.
 *
 * @param settings the settings found, by {@link SwitchMLConfig.Key}
 * @param sources  for each, the variables it came from (for errors)
 */
record LauncherEnvironment(Map<SwitchMLConfig.Key, String> settings, Map<SwitchMLConfig.Key, String> sources) {
    static LauncherEnvironment of(Map<String, String> env) {
        Map<SwitchMLConfig.Key, String> settings = new LinkedHashMap<>();
        Map<SwitchMLConfig.Key, String> sources = new LinkedHashMap<>();
        first(env, SwitchMLConfig.Key.RANK, settings, sources, "RANK", "SLURM_PROCID", "JOB_COMPLETION_INDEX");
        first(env, SwitchMLConfig.Key.WORKERS, settings, sources, "WORLD_SIZE", "SLURM_NTASKS");
        String runId = set(env, "TORCHELASTIC_RUN_ID");
        String job = null;
        String from = null;
        // A dynamic rendezvous: every node of a round gets the address and port its rank 0 chose.
        boolean namedByRound = runId != null && !runId.equals("none")
                && "False".equals(set(env, "TORCHELASTIC_USE_AGENT_STORE"))
                && set(env, "MASTER_ADDR") != null && set(env, "MASTER_PORT") != null;
        if (namedByRound) {
            job = "torch-" + runId + "-" + set(env, "MASTER_ADDR") + ":" + set(env, "MASTER_PORT");
            from = "TORCHELASTIC_RUN_ID, MASTER_ADDR and MASTER_PORT (a dynamic rendezvous's round)";
        } else if (runId != null && !runId.equals("none")) {
            job = "torch-" + runId;
            from = "TORCHELASTIC_RUN_ID";
        } else if (set(env, "MASTER_ADDR") != null && set(env, "MASTER_PORT") != null) {
            job = "torch-" + set(env, "MASTER_ADDR") + ":" + set(env, "MASTER_PORT");
            from = "MASTER_ADDR and MASTER_PORT";
        }
        String restart = set(env, "TORCHELASTIC_RESTART_COUNT");
        if (job != null && !namedByRound && restart != null && !restart.equals("0")) {
            job += "-restart" + restart;
            from += " and TORCHELASTIC_RESTART_COUNT";
        }
        if (job == null && set(env, "SLURM_JOB_ID") != null) {
            String step = set(env, "SLURM_STEP_ID");
            job = "slurm-" + set(env, "SLURM_JOB_ID") + (step == null ? "" : "." + step);
            from = step == null ? "SLURM_JOB_ID" : "SLURM_JOB_ID and SLURM_STEP_ID";
        }
        if (job != null) {
            settings.put(SwitchMLConfig.Key.JOB, job);
            sources.put(SwitchMLConfig.Key.JOB, from);
        }
        return new LauncherEnvironment(Map.copyOf(settings), Map.copyOf(sources));
    }

    private static void first(Map<String, String> env, SwitchMLConfig.Key key, Map<SwitchMLConfig.Key, String> settings,
                              Map<SwitchMLConfig.Key, String> sources, String... variables) {
        for (String variable : variables) {
            String value = set(env, variable);
            if (value != null) {
                settings.put(key, value);
                sources.put(key, variable);
                return;
            }
        }
    }

    /** The variable's value, trimmed; null when unset or blank. */
    private static String set(Map<String, String> env, String variable) {
        String value = env.get(variable);
        return value == null || value.isBlank() ? null : value.trim();
    }
}
