package io.switchml.cli;

import io.switchml.controller.proto.JobStatus;
import io.switchml.controller.proto.StatusResponse;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code switchml ctl jobs}: the switch's jobs, installed and forming, with their workers. */
@Command(name = "jobs", mixinStandardHelpOptions = true,
        description = "List the jobs: installed ones by number, then those whose workers are still joining (*).")
final class CtlJobsCommand implements Callable<Integer> {
    @ParentCommand
    CtlCommand ctl;

    @Override
    public Integer call() {
        CtlOutput output = ctl.output();
        StatusResponse status = ctl.status("list the jobs");
        List<JobStatus> jobs = new ArrayList<>(status.getJobsList());
        jobs.addAll(status.getFormingJobsList());
        output.print(Map.of("jobs", jobs.stream().map(CtlJobView::json).toList()), out -> {
            if (jobs.isEmpty()) {
                out.println("no jobs");
                return;
            }
            CtlJobView.tableHeader(out);
            jobs.forEach(job -> CtlJobView.tableRows(job, out));
            if (!status.getFormingJobsList().isEmpty()) {
                out.println("* still forming: not every worker has joined; no job number yet");
            }
        });
        return 0;
    }
}
