#include "app/experiment_window.h"

#include <QComboBox>
#include <QDateTime>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

#include "app/experiment_runner.h"
#include "app/storage_service.h"

namespace hearth::app {
namespace {

constexpr int kIdRole = Qt::UserRole + 1;

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

QString first_line(const std::string& text, int max = 60) {
  QString line = qs(text).trimmed().section(QLatin1Char('\n'), 0, 0).simplified();
  if (line.size() > max) line = line.left(max - 1) + QChar(0x2026);
  return line;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// Every prompt version, as "NAME@N" with its id.
using VersionChoices = std::vector<std::pair<std::string, store::Id>>;

}  // namespace

ExperimentWindow::ExperimentWindow(StorageService* storage, ChatBackend* backend, store::HistoryQuery prompts,
                                   QWidget* parent)
    : QWidget(parent, Qt::Window),
      storage_(storage),
      backend_(backend),
      prompts_(std::move(prompts)),
      runner_(new ExperimentRunner(storage, backend, this)),
      results_(new QStandardItemModel(this)),
      past_model_(new QStandardItemModel(this)) {
  setObjectName(QStringLiteral("experimentWindow"));
  setWindowTitle(tr("Experiments"));
  resize(1200, 600);
  name_ = new QLineEdit(
      tr("Experiment %1").arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyy-MM-dd HH:mm"))), this);
  name_->setObjectName(QStringLiteral("experimentName"));
  version_a_ = new QComboBox(this);
  version_a_->setObjectName(QStringLiteral("experimentVersionA"));
  version_b_ = new QComboBox(this);
  version_b_->setObjectName(QStringLiteral("experimentVersionB"));
  count_ = new QSpinBox(this);
  count_->setObjectName(QStringLiteral("experimentCount"));
  count_->setRange(1, 500);
  count_->setValue(10);
  count_->setToolTip(tr("How many prompts of the history filter (its first rows, as sorted there)"));
  run_ = new QPushButton(tr("Run"), this);
  run_->setObjectName(QStringLiteral("experimentRun"));
  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("experimentStatus"));
  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("experimentSummary"));
  summary_->setWordWrap(true);
  table_ = new QTableView(this);
  table_->setObjectName(QStringLiteral("experimentTable"));
  table_->setModel(results_);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  past_ = new QListView(this);
  past_->setObjectName(QStringLiteral("experimentList"));
  past_->setModel(past_model_);
  past_->setEditTriggers(QAbstractItemView::NoEditTriggers);

  auto* form = new QFormLayout;
  form->addRow(tr("Name"), name_);
  form->addRow(tr("Version A"), version_a_);
  form->addRow(tr("Version B"), version_b_);
  form->addRow(tr("Prompts from the history filter"), count_);
  auto* left = new QWidget(this);
  auto* left_layout = new QVBoxLayout(left);
  left_layout->addLayout(form);
  left_layout->addWidget(run_);
  left_layout->addWidget(new QLabel(tr("Past experiments"), left));
  left_layout->addWidget(past_, 1);
  auto* right = new QWidget(this);
  auto* right_layout = new QVBoxLayout(right);
  right_layout->addWidget(status_);
  right_layout->addWidget(table_, 1);
  right_layout->addWidget(summary_);
  auto* split = new QSplitter(this);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split);

  connect(run_, &QPushButton::clicked, this, &ExperimentWindow::run);
  connect(past_, &QListView::activated, this,
          [this](const QModelIndex& i) { showExperiment(i.data(kIdRole).toLongLong()); });
  connect(past_, &QListView::clicked, this,
          [this](const QModelIndex& i) { showExperiment(i.data(kIdRole).toLongLong()); });
  connect(runner_, &ExperimentRunner::started, this, [this](qint64 id, int n) {
    status_->setText(tr("Running %1 generations at once\u2026").arg(n));
    reloadList();
    showExperiment(id);
  });
  connect(runner_, &ExperimentRunner::progress, this,
          [this](int done, int total) { status_->setText(tr("%1 of %2 generations finished").arg(done).arg(total)); });
  connect(runner_, &ExperimentRunner::finished, this, [this](qint64 id) {
    run_->setEnabled(true);
    status_->setText(tr("Finished."));
    showExperiment(id);
  });
  connect(runner_, &ExperimentRunner::failed, this, [this](const QString& message) {
    run_->setEnabled(true);
    status_->setText(message);
  });
  loadVersions();
  reloadList();
}

bool ExperimentWindow::versionsLoaded() const {
  return version_a_->count() > 0;
}

void ExperimentWindow::loadVersions() {
  storage_->run(
      this, tr("reading the prompt versions"),
      [](store::Store& s) -> store::StoreResult<VersionChoices> {
        VersionChoices out;
        STORE_ASSIGN_OR_RETURN(const auto prompts, s.list_prompts(false));
        for (const auto& p : prompts) {
          STORE_ASSIGN_OR_RETURN(const auto versions, s.list_prompt_versions(p.id));
          for (const auto& v : versions) out.emplace_back(p.name + "@" + std::to_string(v.version), v.id);
        }
        return out;
      },
      [this](VersionChoices versions) {
        for (QComboBox* c : {version_a_, version_b_}) {
          c->clear();
          for (const auto& [name, id] : versions) c->addItem(qs(name), QVariant::fromValue(static_cast<qint64>(id)));
        }
        if (versions.size() > 1) version_b_->setCurrentIndex(static_cast<int>(versions.size()) - 1);
      });
}

void ExperimentWindow::reloadList() {
  storage_->run(
      this, tr("listing experiments"), [](store::Store& s) { return s.list_experiments(); },
      [this](std::vector<store::Experiment> experiments) {
        past_model_->clear();
        for (const auto& e : experiments) {
          auto* item = new QStandardItem(QStringLiteral("%1 (%2)").arg(
              qs(e.name), QDateTime::fromMSecsSinceEpoch(e.created_ms).toString(QStringLiteral("yyyy-MM-dd HH:mm"))));
          item->setData(QVariant::fromValue(static_cast<qint64>(e.id)), kIdRole);
          past_model_->appendRow(item);
        }
      });
}

void ExperimentWindow::run() {
  ExperimentPlan plan;
  plan.name = name_->text().trimmed().toStdString();
  if (plan.name.empty()) plan.name = "experiment";
  plan.version_a = version_a_->currentData().toLongLong();
  plan.version_b = version_b_->currentData().toLongLong();
  store::HistoryQuery q = prompts_;
  q.limit = count_->value();
  q.offset = 0;
  run_->setEnabled(false);
  status_->setText(tr("Choosing the prompts\u2026"));
  storage_->run(
      this, tr("reading the experiment's prompts"),
      [q](store::Store& s) -> store::StoreResult<std::vector<store::Id>> {
        STORE_ASSIGN_OR_RETURN(const auto rows, s.history(q));
        std::vector<store::Id> ids;
        for (const auto& e : rows) ids.push_back(e.message_id);
        return ids;
      },
      [this, plan](std::vector<store::Id> ids) mutable {
        plan.prompts = std::move(ids);
        runner_->start(plan);
      });
}

void ExperimentWindow::showExperiment(qint64 experiment_id) {
  storage_->run(
      this, tr("reading experiment %1").arg(experiment_id),
      [experiment_id](store::Store& s) -> store::StoreResult<Loaded> {
        Loaded out;
        STORE_ASSIGN_OR_RETURN(out.experiment, s.get_experiment(experiment_id));
        for (auto [id, name] : {std::pair{out.experiment.version_a_id, &out.version_a},
                                std::pair{out.experiment.version_b_id, &out.version_b}}) {
          STORE_ASSIGN_OR_RETURN(const store::PromptVersion v, s.get_prompt_version(id));
          STORE_ASSIGN_OR_RETURN(const store::Prompt p, s.get_prompt(v.prompt_id));
          *name = p.name + "@" + std::to_string(v.version);
        }
        std::map<store::Id, std::size_t> row_of;  // source message -> row
        for (const auto& r : out.experiment.results) {
          auto [it, added] = row_of.emplace(r.source_message_id, out.rows.size());
          if (added) {
            STORE_ASSIGN_OR_RETURN(const store::Message m, s.get_message(r.source_message_id));
            out.rows.push_back({m.content, std::nullopt, std::nullopt});
          }
          Cell cell;
          if (r.answer_message_id) {
            STORE_ASSIGN_OR_RETURN(const store::Message answer, s.get_message(*r.answer_message_id));
            cell.text = answer.content;
            STORE_ASSIGN_OR_RETURN(cell.generation, s.get_generation(*r.answer_message_id));
          }
          Row& row = out.rows[it->second];
          (r.version_id == out.experiment.version_a_id && !row.a ? row.a : row.b) = std::move(cell);
        }
        return out;
      },
      [this](Loaded loaded) { fill(loaded); });
}

void ExperimentWindow::fill(const Loaded& loaded) {
  shown_ = loaded.experiment.id;
  results_->clear();
  const QString a = qs(loaded.version_a), b = qs(loaded.version_b);
  results_->setHorizontalHeaderLabels({tr("Prompt"), a, tr("TTFT ms"), tr("tok/s"), tr("tokens"), tr("finish"), b,
                                       tr("TTFT ms"), tr("tok/s"), tr("tokens"), tr("finish")});
  struct Totals {
    std::vector<double> ttft, tps, tokens;
    std::map<std::string, int> finish;
  } totals[2];
  const auto cells = [](const std::optional<Cell>& c, Totals& t) {
    QList<QStandardItem*> items;
    items << new QStandardItem(c ? first_line(c->text) : QString());
    if (c) items.front()->setToolTip(qs(c->text));
    if (c && c->generation) {
      const auto& g = *c->generation;
      items << new QStandardItem(QString::number(g.ttft_ms, 'f', 1))
            << new QStandardItem(QString::number(g.decode_tok_s, 'f', 1))
            << new QStandardItem(QString::number(g.generated_tokens)) << new QStandardItem(qs(g.finish_reason));
      t.ttft.push_back(g.ttft_ms);
      t.tps.push_back(g.decode_tok_s);
      t.tokens.push_back(static_cast<double>(g.generated_tokens));
      ++t.finish[g.finish_reason];
    } else {
      for (int i = 0; i < 4; ++i) items << new QStandardItem(c ? tr("running") : QString());
    }
    return items;
  };
  for (const Row& row : loaded.rows) {
    QList<QStandardItem*> items{new QStandardItem(first_line(row.prompt))};
    items.front()->setToolTip(qs(row.prompt));
    items << cells(row.a, totals[0]) << cells(row.b, totals[1]);
    results_->appendRow(items);
  }
  // The aggregate row, and the same in words under the table.
  QList<QStandardItem*> aggregate{
      new QStandardItem(tr("Median (%n prompt(s))", nullptr, static_cast<int>(loaded.rows.size())))};
  QStringList words;
  for (int side = 0; side < 2; ++side) {
    const Totals& t = totals[side];
    double mean_tokens = 0;
    for (double v : t.tokens) mean_tokens += v;
    if (!t.tokens.empty()) mean_tokens /= static_cast<double>(t.tokens.size());
    QStringList finish;
    for (const auto& [reason, n] : t.finish) finish << QStringLiteral("%1 %2").arg(qs(reason)).arg(n);
    aggregate << new QStandardItem(tr("%n answer(s)", nullptr, static_cast<int>(t.ttft.size())))
              << new QStandardItem(QString::number(median(t.ttft), 'f', 1))
              << new QStandardItem(QString::number(median(t.tps), 'f', 1))
              << new QStandardItem(QString::number(mean_tokens, 'f', 1))
              << new QStandardItem(finish.join(QStringLiteral(", ")));
    words << tr("%1: median TTFT %2 ms, median %3 tok/s, mean length %4 tokens (%5)")
                 .arg(side == 0 ? a : b)
                 .arg(median(t.ttft), 0, 'f', 1)
                 .arg(median(t.tps), 0, 'f', 1)
                 .arg(mean_tokens, 0, 'f', 1)
                 .arg(finish.join(QStringLiteral(", ")));
  }
  for (QStandardItem* item : aggregate) {
    QFont bold = item->font();
    bold.setBold(true);
    item->setFont(bold);
  }
  results_->appendRow(aggregate);
  summary_->setText(words.join(QStringLiteral("\n")));
  table_->resizeColumnsToContents();
  emit experimentShown(shown_);
}

}  // namespace hearth::app
