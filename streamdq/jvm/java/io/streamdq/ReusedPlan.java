package io.streamdq;

import java.util.Collections;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.QueryPlanningTracker;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.LogicalRDD;
import org.apache.spark.sql.execution.QueryExecution;

/**
 * The small-batch path's projection put over a new microbatch's plan, without Spark analysing
 * or optimising it again (streamdq.engine.arrow_path._select).
 *
 * <p>A streaming query's microbatches are plans over the same attributes; the projection of the
 * first batch was analysed and optimised by Spark, and is kept. For each later batch it is put
 * over the batch's plan and marked analysed. When the batch's plan is a {@code LogicalRDD} (what
 * {@code foreachBatch} hands over: a leaf over the already planned RDD, with nothing left to
 * optimise) and the kept projection is the optimised one, the query's optimised plan IS that plan:
 * the optimiser's rule set (~100 rules, run to a fixed point over ~30 expressions, tens of
 * milliseconds on a loaded machine) is skipped. Any other input is optimised by Spark as usual.
 */
public final class ReusedPlan {
  private ReusedPlan() {}

  /**
   * A DataFrame of {@code kept} (an analysed, and optimised when {@code optimized}, projection
   * whose child had {@code child}'s output) over {@code child}.
   */
  public static Dataset<Row> over(
      SparkSession session, LogicalPlan kept, LogicalPlan child, boolean optimized) {
    LogicalPlan plan =
        kept.withNewChildren(
            scala.jdk.javaapi.CollectionConverters.asScala(Collections.singletonList(child))
                .toSeq());
    plan.setAnalyzed();
    if (!optimized || !(child instanceof LogicalRDD)) {
      return Dataset.ofRows(session, plan);
    }
    final LogicalPlan done = plan;
    QueryExecution qe =
        new QueryExecution(
            session,
            plan,
            new QueryPlanningTracker(QueryPlanningTracker.$lessinit$greater$default$1()),
            QueryExecution.$lessinit$greater$default$4(),
            QueryExecution.$lessinit$greater$default$5(),
            QueryExecution.$lessinit$greater$default$6(),
            QueryExecution.$lessinit$greater$default$7(),
            QueryExecution.$lessinit$greater$default$8()) {
          @Override
          public LogicalPlan optimizedPlan() {
            return done;
          }
        };
    return new Dataset<Row>(qe, Encoders.row(plan.schema()));
  }
}
