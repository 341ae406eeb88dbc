// Drives the openapi-generator `java` client (library `native`: java.net.http and Jackson, in
// packages openauth.client.*) through a workflow's life.
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.node.ObjectNode;
import openauth.client.ApiClient;
import openauth.client.ApiException;
import openauth.client.api.WorkflowsApi;
import openauth.client.model.RunDetail;
import openauth.client.model.RunRequest;
import openauth.client.model.WorkflowCreate;

public class Main {
  static WorkflowsApi api;

  static void check(boolean ok, String message) {
    if (!ok) throw new IllegalStateException(message);
  }

  static void step(String name) {
    System.out.println("ok " + name);
  }

  /** Reads the run until its status is `want`, for 30 s at most. */
  static RunDetail readUntil(String workflowId, String runId, String want) throws Exception {
    long deadline = System.currentTimeMillis() + 30_000;
    for (;;) {
      RunDetail run = api.getRun(workflowId, runId, null).getData();
      if (want.equals(run.getStatus())) return run; // an open enum: a plain String
      check(System.currentTimeMillis() < deadline, "run " + runId + " is " + run.getStatus() + ", not " + want);
      Thread.sleep(100);
    }
  }

  static String run(String workflowId, String text) throws Exception {
    return api.runWorkflow(workflowId, new RunRequest().inputs(Map.of("ticket", text)), null, null).getData().getId();
  }

  public static void main(String[] args) throws Exception {
    ApiClient client = new ApiClient();
    client.updateBaseUri(System.getenv("BASE_URL"));
    // The native library has no bearer setting: a request interceptor adds the header (docs/generators.md).
    String apiKey = System.getenv("API_KEY");
    // A client generated from a release before 1.2.0 says which (docs/generators.md).
    String apiVersion = System.getenv("API_VERSION");
    client.setRequestInterceptor(request -> {
      request.header("Authorization", "Bearer " + apiKey);
      if (apiVersion != null) request.header("Api-Version", apiVersion);
    });
    api = new WorkflowsApi(client);

    ObjectNode body = (ObjectNode) client.getObjectMapper().readTree(Files.readString(Path.of(System.getenv("WORKFLOW_FILE"))));
    body.put("name", "Generated client (openapi-generator java)");
    String workflowId = api.createWorkflow(client.getObjectMapper().treeToValue(body, WorkflowCreate.class)).getData().getId();
    step("create");

    String held = run(workflowId, "hang");
    RunDetail running = readUntil(workflowId, held, "running");
    check(running.getOutput() == null && running.getError() == null && running.getDuration() == null, "running run: " + running);
    step("read running");
    String waiting = run(workflowId, "hang");
    RunDetail queued = readUntil(workflowId, waiting, "queued");
    check(queued.getStartedAt() == null && queued.getLogs().isEmpty(), "queued run: " + queued);
    step("read queued");
    api.cancelRun(workflowId, waiting);
    RunDetail cancelled = readUntil(workflowId, waiting, "cancelled");
    check("cancelled".equals(cancelled.getError().getCode()), "cancelled run: " + cancelled);
    api.cancelRun(workflowId, held);
    readUntil(workflowId, held, "cancelled");
    step("read cancelled");
    RunDetail completed = readUntil(workflowId, run(workflowId, "hello"), "completed");
    check(Map.of("result", "HELLO").equals(completed.getOutput()) && completed.getError() == null && completed.getDuration() != null, "completed run: " + completed);
    step("read completed");
    RunDetail failed = readUntil(workflowId, run(workflowId, "fail"), "failed");
    check(failed.getError().getCode() != null && "model".equals(failed.getError().getNodeId()), "failed run: " + failed);
    step("read failed");
    deleteWorkflow(workflowId);
    Supplier<Integer> gone = () -> {
      try {
        api.getWorkflow(workflowId);
        return 200;
      } catch (ApiException e) {
        return e.getCode();
      }
    };
    int status = gone.get();
    check(status == 404, "the deleted workflow answered " + status);
    step("delete");
    later(client);
  }

  /** deleteWorkflow takes If-Match from 1.1.0 on: called by reflection to build against every release. */
  static void deleteWorkflow(String workflowId) throws Exception {
    java.lang.reflect.Method m = java.util.Arrays.stream(WorkflowsApi.class.getMethods())
        .filter(candidate -> candidate.getName().equals("deleteWorkflow"))
        .min(java.util.Comparator.comparingInt(java.lang.reflect.Method::getParameterCount))
        .orElseThrow();
    Object[] args = new Object[m.getParameterCount()];
    args[0] = workflowId;
    m.invoke(api, args);
  }

  static int statusOf(java.util.concurrent.Callable<?> call) throws Exception {
    try {
      call.call();
      return 200;
    } catch (ApiException e) {
      return e.getCode();
    }
  }

  /** What a later version added, read by a client that does not know it (scripts/generators.ts). */
  static void later(ApiClient client) throws Exception {
    String workflowId = System.getenv("LATER_WORKFLOW_ID");
    boolean shown = "1".equals(System.getenv("LATER_SHOWN"));
    if (shown) {
      Object workflow = api.getWorkflow(workflowId).getData();
      com.fasterxml.jackson.databind.JsonNode read = client.getObjectMapper().valueToTree(workflow);
      java.util.Set<String> types = new java.util.HashSet<>();
      read.get("nodes").forEach(node -> types.add(node.get("type").asText()));
      for (String want : System.getenv("LATER_NODE_TYPES").split(",")) check(types.contains(want), "node type " + want + " not read: " + types);
      step("read a workflow with node types it does not know");
    } else {
      int status = statusOf(() -> api.getWorkflow(workflowId));
      check(status == 406, "a workflow its release cannot show answered " + status);
      step("read a workflow its release cannot show: 406");
    }
    boolean listed = api.listWorkflows(null, null, null).getData().stream().anyMatch(w -> workflowId.equals(w.getId()));
    check(listed == shown, "the list and the workflow disagree");
    step("list");
    RunDetail run = api.getRun(workflowId, System.getenv("LATER_RUN_ID"), null).getData();
    check("completed".equals(run.getStatus()) && run.getLogs().size() == 5, "the later run: " + run);
    step("read a run of it, its steps");
    int missing = statusOf(() -> api.getWorkflow("wf_not_there"));
    check(missing == 404, "a missing workflow answered " + missing);
    step("problem");
  }
}
