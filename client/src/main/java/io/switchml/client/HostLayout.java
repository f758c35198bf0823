package io.switchml.client;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Which of a launch's ranks share a host (docs/ARCHITECTURE.md section 16): the ranks of one host sum their tensors
 * there and send one contribution per host, so the switch's job has one worker per host, in the order of each host's
 * lowest rank. Written {@code 0,1/2,3}: hosts separated by {@code /}, a host's ranks by {@code ,}, in the order their
 * tensors are summed.
 *
 * @param hosts every host's ranks; together every rank of the launch exactly once
 */
public record HostLayout(List<List<Integer>> hosts) {
    public HostLayout {
        hosts = hosts.stream().map(List::copyOf).toList();
    }

    /**
     * Parses {@code text} for a launch of {@code ranks} ranks.
     *
     * @throws IllegalArgumentException saying what is wrong: a rank outside 0..ranks-1, missing or named twice, an empty host
     */
    public static HostLayout parse(String text, int ranks) {
        List<List<Integer>> hosts = new ArrayList<>();
        for (String host : text.trim().split("/", -1)) {
            List<Integer> mine = new ArrayList<>();
            for (String rank : host.split(",", -1)) {
                try {
                    mine.add(Integer.parseInt(rank.trim()));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("host layout '" + text + "': '" + rank.trim() + "' is not a rank"
                            + " (write the hosts' ranks as 0,1/2,3)");
                }
            }
            hosts.add(mine);
        }
        HostLayout layout = new HostLayout(hosts);
        layout.check(ranks, text);
        return layout;
    }

    /** {@code ranksPerHost} consecutive ranks on each host: {@code 0,1/2,3} for 4 ranks, 2 per host. */
    public static HostLayout blocks(int ranks, int ranksPerHost) {
        if (ranksPerHost < 1 || ranks % ranksPerHost != 0) {
            throw new IllegalArgumentException(ranks + " ranks do not fill hosts of " + ranksPerHost);
        }
        List<List<Integer>> hosts = new ArrayList<>();
        for (int first = 0; first < ranks; first += ranksPerHost) {
            List<Integer> host = new ArrayList<>();
            for (int r = first; r < first + ranksPerHost; r++) {
                host.add(r);
            }
            hosts.add(host);
        }
        return new HostLayout(hosts);
    }

    /** The ranks grouped by equal keys ({@code keys.get(rank)}: where that rank runs), hosts in order of their lowest rank. */
    public static HostLayout byKey(List<String> keys) {
        Map<String, List<Integer>> hosts = new LinkedHashMap<>();
        for (int rank = 0; rank < keys.size(); rank++) {
            hosts.computeIfAbsent(keys.get(rank), k -> new ArrayList<>()).add(rank);
        }
        return new HostLayout(new ArrayList<>(hosts.values()));
    }

    /** Hosts in the launch: the workers of the switch's job. */
    public int hostCount() {
        return hosts.size();
    }

    /** The index of the host {@code rank} runs on: its rank in the switch's job. */
    public int hostOf(int rank) {
        for (int h = 0; h < hosts.size(); h++) {
            if (hosts.get(h).contains(rank)) {
                return h;
            }
        }
        throw new IllegalArgumentException("rank " + rank + " is on no host of " + this);
    }

    /** The ranks of host {@code host}, in the order their tensors are summed. */
    public List<Integer> ranksOf(int host) {
        return hosts.get(host);
    }

    /** Whether some host has more than one rank: otherwise every rank is a worker of the switch's job, as without a layout. */
    public boolean groupsRanks() {
        return hosts.stream().anyMatch(h -> h.size() > 1);
    }

    /** Ranks in the launch. */
    public int rankCount() {
        return hosts.stream().mapToInt(List::size).sum();
    }

    @Override
    public String toString() {
        return hosts.stream().map(h -> h.stream().map(String::valueOf).collect(Collectors.joining(",")))
                .collect(Collectors.joining("/"));
    }

    private void check(int ranks, String text) {
        boolean[] seen = new boolean[ranks];
        for (List<Integer> host : hosts) {
            if (host.isEmpty()) {
                throw new IllegalArgumentException("host layout '" + text + "' has a host without ranks");
            }
            for (int r : host) {
                if (r < 0 || r >= ranks) {
                    throw new IllegalArgumentException("host layout '" + text + "': rank " + r + " is not in 0.." + (ranks - 1));
                }
                if (seen[r]) {
                    throw new IllegalArgumentException("host layout '" + text + "' names rank " + r + " twice");
                }
                seen[r] = true;
            }
        }
        int[] missing = java.util.stream.IntStream.range(0, ranks).filter(r -> !seen[r]).toArray();
        if (missing.length > 0) {
            throw new IllegalArgumentException("host layout '" + text + "' leaves out rank(s) " + Arrays.toString(missing)
                    + " of the launch's " + ranks);
        }
    }
}
