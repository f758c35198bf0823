package io.switchml.controller;

import io.switchml.controller.proto.JobParameters;
import io.switchml.dataplane.WorkerEndpoint;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;

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
    Map<Integer, WorkerEndpoint> endpoints = Map.of();

    Job(String name, JobParameters parameters) {
        this.name = name;
        this.parameters = parameters;
        this.joining = new Rendezvous<>(parameters.getNumWorkers());
    }

    int workers() {
        return parameters.getNumWorkers();
    }

    boolean installed() {
        return number >= 0;
    }

    /** A barrier (root -1) or a broadcast from root, with the values the ranks brought. */
    static final class Meeting {
        final int root;
        final Rendezvous<byte[]> rendezvous;

        Meeting(int root, int parties) {
            this.root = root;
            this.rendezvous = new Rendezvous<>(parties);
        }
    }
}
