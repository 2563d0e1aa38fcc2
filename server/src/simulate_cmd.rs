//! `claimpool simulate`: replays judging orders over a project's pooled runs, with the project's
//! final labels (citation evidence included) as the truth, and prints the discovery curves.

use anyhow::Context;
use app::domain::judging::{evidence_at, Order};
use app::store::{self, judging::Simulation};
use clap::Args;
use std::fmt::Write as _;
use std::io::Write as _;

/// Options of `claimpool simulate`.
#[derive(Args)]
pub struct SimulateArgs {
    /// The project
    #[arg(long)]
    project: String,
    /// The judging order: depth, mtf, mab (= mab-maxmean), mab-thompson or hedge; several
    /// separated by commas, or `all`
    #[arg(long, default_value = "all")]
    order: String,
    /// Judgments to spend
    #[arg(long)]
    budget: usize,
    /// Seed of Thompson sampling
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print JSON: for one order {"order", "budget", "curve": [{"judgments", "evidence"}, ...]}
    /// with one point per judgment; for several, an array of such objects
    #[arg(long)]
    json: bool,
}

/// The orders `--order` names.
fn orders(text: &str) -> anyhow::Result<Vec<Order>> {
    if text.trim().eq_ignore_ascii_case("all") {
        return Ok(Order::ALL.to_vec());
    }
    let mut orders = Vec::new();
    for part in text.split(',') {
        let order = Order::parse(part).map_err(|e| anyhow::anyhow!("--order: {e}"))?;
        if !orders.contains(&order) {
            orders.push(order);
        }
    }
    Ok(orders)
}

/// The JSON object of one simulation.
fn json(sim: &Simulation) -> serde_json::Value {
    serde_json::json!({
        "order": sim.order.as_str(),
        "strategy": sim.strategy.as_str(),
        "budget": sim.budget,
        "evidence_pairs": sim.evidence_pairs,
        "candidate_pairs": sim.candidate_pairs,
        "curve": sim.curve,
    })
}

/// Budgets the table shows: 250, 500, 1,000, 2,000, ... below the budget, and the budget.
fn checkpoints(budget: usize) -> Vec<usize> {
    let mut points: Vec<usize> = std::iter::successors(Some(250usize), |b| b.checked_mul(2))
        .take_while(|&b| b < budget)
        .collect();
    points.push(budget);
    points
}

fn table(project: &str, sims: &[Simulation]) -> String {
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
        let _ = write!(out, "{:<14}", sim.order.as_str());
        for &p in &points {
            let _ = write!(out, "{:>10}", evidence_at(&sim.curve, p));
        }
        out.push('\n');
    }
    out
}

/// Runs `claimpool simulate`.
pub async fn run(db: &store::Db, args: SimulateArgs) -> anyhow::Result<()> {
    let orders = orders(&args.order)?;
    let project = store::projects::id_by_name(db, &args.project).await?;
    let sims = store::judging::simulate(db, project, &orders, args.budget, args.seed).await?;
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
        assert_eq!(orders("all").unwrap(), Order::ALL.to_vec());
        assert_eq!(
            orders("depth,mab,depth").unwrap(),
            vec![Order::Depth, Order::MabMaxMean]
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
