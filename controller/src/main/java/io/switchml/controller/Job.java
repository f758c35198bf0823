package io.switchml.controller;

import io.switchml.controller.proto.JobParameters;
import io.switchml.dataplane.WorkerEndpoint;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ScheduledFuture;

/** A job as the controller knows it: forming (ranks joining) or installed in the switch. */
final class Job {
    final String name;
    final JobParameters parameters;
    final Rendezvous<WorkerEndpoint> joining;
    /** Barriers and broadcasts in progress, by sequence number. */
    final Map<Long, Meeting> meetings = new HashMap<>();
    final TreeSet<Integer> left = new TreeSet<>();
    /** Assigned when every rank has joined and the job is installed; -1 before. */
    int number = -1;
    /** When a rank last showed it is alive (see {@code JobRegistry.reclaimIdle}). */
    final LastHeard lastHeard = new LastHeard();
    /** Identifies this run of the job (job numbers are reused); assigned with the number. */
    long id;
    Map<Integer, WorkerEndpoint> endpoints = Map.of();
    /** The window admission control gave the job; assigned with the number. */
    SlotAdmission.Grant grant;
    /**
     * The salt of this run's packet key (docs/ARCHITECTURE.md section 19), returned with the join; null for a job
     * without authenticated packets. Assigned with the number.
     */
    byte[] packetKeySalt;
    /** Values per worker thread the switch takes in one round for this job (0: two rounds always). */
    int oneRoundElements;
    /** Ranks that promised to open a watch, and how long they may take once the job forms (ms). */
    final Map<Integer, Integer> watchGraceMs = new HashMap<>();
    /** Timers of the promised watches not yet opened, by rank. */
    final Map<Integer, ScheduledFuture<?>> watchDeadlines = new HashMap<>();
    /** The open watches, by rank. */
    final Map<Integer, JobRegistry.Watcher> watches = new TreeMap<>();
    /** Ranks declared dead. */
    final TreeSet<Integer> failed = new TreeSet<>();
    /** Why the job was aborted; null while it runs. An aborted job is no longer on the switch. */
    String abortReason;
    /** The digest of the secret every call on the job must present; null: the job has none. */
    final byte[] secretDigest;
    /** The address each joining rank's call came from (null where unknown), to cap what one peer may hold. */
    final Map<Integer, java.net.InetAddress> joinPeers = new HashMap<>();
    /** Each joining rank's tenant ({@link Caller#tenantOf}), to cap what one tenant may have waiting. */
    final Map<Integer, String> joinTenants = new HashMap<>();
    /** Whose share of the switch the job counts against: its first join's tenant; null: none (the operator). */
    String tenant;
    /** Each rank's latest transport report and when it arrived (System.nanoTime()), in rank order. */
    final Map<Integer, TransportReports.Received> transport = new TreeMap<>();
    /** Whether the names of the job's shared-memory files were removed, once every rank reported its transport. */
    boolean ipcSealed;

    /**
     * The ranks this controller serves: all n, or a leaf's share {@code firstRank..firstRank+rankCount-1}
     * (docs/ARCHITECTURE.md section 9). The switch knows them as positions 0..rankCount-1.
     */
    final int firstRank;
    final int rankCount;
    /** The longest join timeout its ranks asked for: how long a leaf's join at the spine may wait. */
    int joinTimeoutMs;
    /** A leaf's job: its membership of the spine's job, once joined; null otherwise. */
    SpineMembership spine;
    /** A leaf's job whose local ranks are all here, while the leaf joins the spine. */
    boolean joiningSpine;

    Job(String name, JobParameters parameters, byte[] secretDigest) {
        this(name, parameters, secretDigest, 0, parameters.getNumWorkers());
    }

    Job(String name, JobParameters parameters, byte[] secretDigest, int firstRank, int rankCount) {
        this.name = name;
        this.parameters = parameters;
        this.secretDigest = secretDigest;
        this.firstRank = firstRank;
        this.rankCount = rankCount;
        this.joining = new Rendezvous<>(firstRank, rankCount);
    }

    /** All ranks of the job, n. */
    int workers() {
        return parameters.getNumWorkers();
    }

    /** The ranks this controller serves (all n unless it is a leaf). */
    int ranks() {
        return rankCount;
    }

    /** Whether this controller serves rank (a leaf serves its share only). */
    boolean serves(int rank) {
        return rank >= firstRank && rank < firstRank + rankCount;
    }

    boolean installed() {
        return number >= 0;
    }

    boolean aborted() {
        return abortReason != null;
    }

    /** A barrier (root -1) or a broadcast from root, with the values the ranks brought. */
    static final class Meeting {
        final int root;
        final Rendezvous<byte[]> rendezvous;
        /** A leaf's local ranks are all here and the call went on to the spine; its answer releases them. */
        boolean relaying;

        Meeting(int root, int firstRank, int parties) {
            this.root = root;
            this.rendezvous = new Rendezvous<>(firstRank, parties);
        }
    }
}
