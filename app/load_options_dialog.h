// "Load with options": what each choice costs before a model loads. The user
// picks the model, the device, the weights' format (the file's own, or a
// coarser one converted at load; finer ones are listed disabled, with the
// reason), the KV cache precision and the context length. Every change
// re-plans it (models::plan_device: the sizing open_engine() will use):
// weights, KV cache, workspace and their total against the device's free
// memory, a verdict, and when it does not fit, each change that would make
// it fit as a button that applies it. "Recommended for this machine"
// (models/recommend.h, worked out off the UI thread) shows its choice and
// reasons and can fill the form with it. Load hands back a RunConfig.
#pragma once

#include <QDialog>
#include <QFutureWatcher>
#include <QStringList>

#include <optional>
#include <vector>

#include "models/recommend.h"
#include "models/run_config.h"

class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QVBoxLayout;

namespace hearth::app {

class LoadOptionsDialog : public QDialog {
  Q_OBJECT

 public:
  // `models`: the paths or names to offer (the model bar's list); `current`
  // is selected (added when missing). `config`: the choices to start from.
  LoadOptionsDialog(const QStringList& models, const QString& current, const models::RunConfig& config,
                    QWidget* parent = nullptr);

  QString model() const;
  models::RunConfig config() const;  // the app's batch limits with the form's choices

  // The last estimate (tests and the window title read them).
  bool fits() const { return fits_; }
  QString verdict() const;
  int suggestionCount() const { return static_cast<int>(suggestions_.size()); }
  const std::optional<models::Recommendation>& recommendation() const { return recommendation_; }

 public slots:
  void useRecommended();  // the form takes the recommendation (when it is there)
  void applySuggestion(int index);

 signals:
  void estimated(bool fits);  // after every re-plan
  void recommended();         // the recommendation arrived

 private:
  void fillFormats();
  void reestimate();
  void showRecommendation();
  void select(QComboBox* box, const QVariant& value);

  models::RunConfig base_;
  QComboBox* model_ = nullptr;
  QComboBox* device_ = nullptr;
  QComboBox* format_ = nullptr;
  QComboBox* kv_ = nullptr;
  QSpinBox* context_ = nullptr;
  QLabel* estimate_ = nullptr;
  QLabel* verdict_ = nullptr;
  QVBoxLayout* suggestion_box_ = nullptr;
  QLabel* recommended_ = nullptr;
  QPushButton* use_recommended_ = nullptr;
  QPushButton* load_ = nullptr;
  bool fits_ = false;
  bool filling_ = false;  // the form is being set from code: one estimate at the end
  std::vector<models::FitSuggestion> suggestions_;
  std::optional<models::Recommendation> recommendation_;
  QFutureWatcher<std::optional<models::Recommendation>> watcher_;
};

}  // namespace hearth::app
